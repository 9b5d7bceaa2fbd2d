// The Slurm side of the grader that needs no cluster: which labs go to which array, the sbatch
// files (what a TA reads and adapts), and one student's results of two arrays merged into one. The
// real thing runs in autograder.slurm (slurm_test.sh) on a local Slurm.
#include <grade/slurm.hpp>
#include <grade/util.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace workbook::grade;

// A made-up course tree: two CPU labs and one CUDA lab; made once, removed at exit.
struct Course {
  fs::path root = fs::temp_directory_path() / ("workbook-slurm-unit-" + std::to_string(getpid()));
  Course() {
    for (const char* lab : {"01_relu", "02_matmul", "05_cuda"})
      fs::create_directories(root / "labs" / lab);
    write_text_atomic(root / "labs" / "01_relu" / "relu.cpp", "");
    write_text_atomic(root / "labs" / "05_cuda" / "square.cu", "");
  }
  ~Course() { fs::remove_all(root); }
};
const fs::path& course() {
  static const Course c;
  return c.root;
}

TEST(SlurmGroups, CudaLabsGoToTheGpuArrayTheRestToTheCpuArray) {
  const std::vector<LabGroup> all = lab_groups(course(), {});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "cpu");
  EXPECT_THAT(all[0].labs, ElementsAre("01", "02"));
  EXPECT_FALSE(all[0].gpu);
  EXPECT_EQ(all[1].name, "gpu");
  EXPECT_THAT(all[1].labs, ElementsAre("05"));
  EXPECT_TRUE(all[1].gpu);

  const std::vector<LabGroup> cpu_only = lab_groups(course(), {"02"});
  ASSERT_EQ(cpu_only.size(), 1u);
  EXPECT_THAT(cpu_only[0].labs, ElementsAre("02"));
  EXPECT_THROW(lab_groups(course(), {"07"}), std::invalid_argument);
  EXPECT_THROW(lab_groups(course() / "labs", {}), std::invalid_argument);
}

TEST(SlurmScript, ReservesCoresAGpuAndPassesTheGradeOptionsOn) {
  SlurmOptions s;
  s.trusted = "/course";
  s.partition = "compute";
  s.gpu_partition = "gpu";
  s.account = "cs4xx";
  s.cpus_per_task = 4;
  s.max_parallel = 16;
  BatchOptions b;
  b.out = "/grades/hw";
  b.cache = "/grades/cache";
  b.grade_arguments = {"--no-perf", "--labs", "01", "--seed", "7", "--test-timeout", "20"};
  const LabGroup gpu{"gpu", {"05", "06"}, true};
  const std::string text =
      sbatch_script(s, b, gpu, "/grades/hw/slurm/gpu.tasks", 40, "/opt/workbook-grade");
  EXPECT_THAT(text, HasSubstr("#SBATCH --array=0-39%16\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --partition=gpu\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --account=cs4xx\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --cpus-per-task=4\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --gres=gpu:1\n"));
  EXPECT_THAT(text, HasSubstr("--labs 05,06"));
  EXPECT_THAT(text, HasSubstr("--seed \"$seed\""));
  // The batch's own --labs and --seed are the task's to set; the rest is passed on.
  EXPECT_THAT(text, Not(HasSubstr("--labs 01")));
  EXPECT_THAT(text, Not(HasSubstr("--seed 7")));
  EXPECT_THAT(text, HasSubstr("--no-perf --test-timeout 20"));
  // Each node type prepares its own cache, on first use.
  EXPECT_THAT(text, HasSubstr("cache=/grades/cache/gpu-$node_type"));
  EXPECT_THAT(text, HasSubstr("nvidia-smi"));
  EXPECT_THAT(text, Not(HasSubstr("--no-prepare")));

  const LabGroup cpu{"cpu", {"01"}, false};
  s.prepared_cache = true;
  s.exclusive = true;
  const std::string cpu_text =
      sbatch_script(s, b, cpu, "/grades/hw/slurm/cpu.tasks", 1, "/opt/workbook-grade");
  EXPECT_THAT(cpu_text, HasSubstr("#SBATCH --partition=compute\n"));
  EXPECT_THAT(cpu_text, HasSubstr("#SBATCH --exclusive\n"));
  EXPECT_THAT(cpu_text, HasSubstr("#SBATCH --array=0-0%16\n"));
  EXPECT_THAT(cpu_text, Not(HasSubstr("--gres")));
  EXPECT_THAT(cpu_text, HasSubstr("cache=/grades/cache\n"));
  EXPECT_THAT(cpu_text, HasSubstr("--no-prepare"));
}

TEST(SlurmMerge, OneStudentsGroupsBecomeOneResult) {
  GradeResult cpu, gpu;
  cpu.id = gpu.id = "alice";
  cpu.seed = gpu.seed = 42;
  cpu.score = 150, cpu.max_score = 200, cpu.seconds = 60, cpu.started_at = "2026-11-23T10:05:00Z";
  gpu.score = 80, gpu.max_score = 100, gpu.seconds = 30, gpu.started_at = "2026-11-23T10:01:00Z";
  cpu.cache_key = "c1", gpu.cache_key = "g1";
  LabResult l1, l2, l5;
  l1.number = "01", l2.number = "02", l5.number = "05";
  cpu.labs = {l2, l1};
  gpu.labs = {l5};
  cpu.files = {{"labs/01/a.cpp", 1, "h1"}};
  gpu.files = {{"labs/05/b.cu", 2, "h2"}};
  gpu.warnings = {"lab05: a warning"};
  const GradeResult r = merge_results({cpu, gpu});
  EXPECT_EQ(r.id, "alice");
  EXPECT_EQ(r.seed, 42u);
  EXPECT_DOUBLE_EQ(r.score, 230);
  EXPECT_DOUBLE_EQ(r.max_score, 300);
  EXPECT_DOUBLE_EQ(r.seconds, 90);
  EXPECT_EQ(r.started_at, "2026-11-23T10:01:00Z");
  EXPECT_EQ(r.cache_key, "c1 + g1");
  ASSERT_EQ(r.labs.size(), 3u);
  EXPECT_EQ(r.labs[0].number, "01");
  EXPECT_EQ(r.labs[2].number, "05");
  EXPECT_EQ(r.files.size(), 2u);
  EXPECT_THAT(r.warnings, ElementsAre("lab05: a warning"));
  EXPECT_THROW(merge_results({}), std::invalid_argument);
}

}  // namespace

TEST(SlurmQueue, ReadsStatesAndReasonsAndKnowsATaskThatCannotStart) {
  const auto queue = parse_queue(
      "12_0|RUNNING|None\n12_1|PENDING|Resources\n12_2|PENDING|launch failed requeued held\n"
      "not a line of squeue\n");
  ASSERT_EQ(queue.size(), 3u);
  EXPECT_EQ(queue.at("12_0").state, "RUNNING");
  EXPECT_EQ(queue.at("12_1").reason, "Resources");
  EXPECT_EQ(queue.at("12_2").reason, "launch failed requeued held");
  EXPECT_TRUE(launch_failed(queue.at("12_2").reason));
  // Waiting for a node, or held by hand, is not a failed launch: the batch keeps waiting.
  EXPECT_FALSE(launch_failed("Resources"));
  EXPECT_FALSE(launch_failed("JobHeldUser"));
}
