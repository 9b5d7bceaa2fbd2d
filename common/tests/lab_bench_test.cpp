// LabBench::main end to end, on perf cases registered here: which rows each case times, and what
// --versus-library keeps (the reference and the libraries), leaves out, and refuses.
#include <workbook/bench.hpp>
#include <workbook/perf.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

// The kernel the cases time, and a numbered version of it: each writes how many times it ran.
int kernel_calls = 0, version_calls = 0;
void kernel(int* out) {
  *out = ++kernel_calls;
}
void version(int* out) {
  *out = ++version_calls;
}

// One case with everything a lab's case may have: the timed function (with its version, from the
// bench), a library baseline and the kernel's own one-thread run.
void with_library(workbook::perf::Case& perf) {
  static int out = 0;
  const auto timed = perf.timed(kernel);
  perf.describe("kernel", "a case with a library row");
  perf.work({.ops = 1e3, .bytes = 1e3});
  perf.extra({.label = "the library", .run = [] {}, .work = {.ops = 1e3, .bytes = 1e3}});
  perf.extra({.label = "your kernel on 1 thread",
              .side = workbook::perf::Extra::Side::yours,
              .run = [&] { timed(&out); },
              .work = {.ops = 1e3, .bytes = 1e3}});
  perf.measure({.run = [&] { timed(&out); },
                .poison = [] { out = -1; },
                .verify = [] { return workbook::CheckResult{.ok = out > 0}; }});
}
WORKBOOK_PERF_CASE(with_library);

// A case with no library: --versus-library leaves it out.
void without_library(workbook::perf::Case& perf) {
  static int out = 0;
  const auto timed = perf.timed(kernel);
  perf.describe("kernel", "a case without a library row");
  perf.work({.ops = 1e3, .bytes = 1e3});
  perf.measure({.run = [&] { timed(&out); },
                .poison = [] { out = -1; },
                .verify = [] { return workbook::CheckResult{.ok = out > 0}; }});
}
WORKBOOK_PERF_CASE(without_library);

// A library that computes something else (on this machine): its check fails.
void wrong(int* out) {
  *out = -7;
}

// A case whose only library is `wrong`, a version the bench gives for this case alone.
void with_wrong_library(workbook::perf::Case& perf) {
  static int out = 0;
  const auto timed = perf.timed(kernel);
  perf.describe("kernel", "a case whose library is wrong");
  perf.work({.ops = 1e3, .bytes = 1e3});
  perf.measure({.run = [&] { timed(&out); },
                .poison = [] { out = 0; },
                .verify =
                    [] {
                      return workbook::CheckResult{.ok = out > 0,
                                                   .summary = out > 0 ? "" : "1 of 1 wrong"};
                    }});
}
WORKBOOK_PERF_CASE(with_wrong_library);

workbook::Ceilings ceilings() {
  workbook::Ceilings c;
  c.machine = workbook::machine_info();
  c.measured_at = "2026-01-01T00:00:00Z";
  c.threads = 1;
  c.copy_1t_gbs = c.copy_regular_1t_gbs = c.copy_streaming_1t_gbs = c.copy_all_gbs = 50;
  c.triad_1t_gbs = c.triad_all_gbs = c.read_1t_gbs = c.read_all_gbs = 50;
  c.l1_read_1t_gbs = 400;
  c.fma_1t_gflops = c.fma_all_gflops = 200;
  c.int8_dot_1t_gops = c.int8_dot_all_gops = 500;
  c.int8_dot_instruction = "test";
  c.cache_knee_bytes = 1 << 20;
  return c;
}

struct BenchRun {
  int code = 0;
  std::string out, err;
  nlohmann::json record;  // results/bench/test.json, when written
};

// The bench's main() on `arguments`, its output and record captured.
BenchRun run_bench(std::vector<std::string> arguments) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() /
                                       ("workbook-lab-bench-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  arguments.insert(arguments.begin(),
                   {"test_bench", "--results", folder.string(), "--max-seconds", "0.01"});
  std::vector<char*> argv;
  for (std::string& a : arguments) argv.push_back(a.data());
  workbook::LabBench bench("test");
  bench.versions(kernel, "the reference",
                 {{"v1", version},
                  {.label = "the wrong library",
                   .function = wrong,
                   .cases = {"with_wrong_library"},
                   .library = true,
                   .known_wrong = "it rounds differently"}});
  bool more_ran = false;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  BenchRun run;
  run.code = bench.main(
      int(argv.size()), argv.data(), [](const std::string&) { return ceilings(); },
      [&](workbook::Bench&, const workbook::BenchOptions&) { more_ran = true; });
  run.out = testing::internal::GetCapturedStdout();
  run.err = testing::internal::GetCapturedStderr();
  if (more_ran) run.out += "[more ran]\n";
  if (std::ifstream record(folder / "bench" / "test.json"); record)
    run.record = nlohmann::json::parse(record);
  std::filesystem::remove_all(folder);
  return run;
}

// The rows timed, as "case: version".
std::set<std::string> rows(const BenchRun& run) {
  std::set<std::string> found;
  for (const nlohmann::json& r : run.record.at("results"))
    found.insert(r.at("group").get<std::string>() + ": " + r.at("version").get<std::string>());
  return found;
}

TEST(LabBench, TimesEveryVersionAndExtraOfEveryCase) {
  version_calls = 0;
  const BenchRun run = run_bench({});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(rows(run),
              UnorderedElementsAre("with_library: the reference", "with_library: v1",
                                   "with_library: the library",
                                   "with_library: the reference's kernel on 1 thread",
                                   "without_library: the reference", "without_library: v1",
                                   "with_wrong_library: the reference", "with_wrong_library: v1"));
  EXPECT_GT(version_calls, 0);  // the version ran in the kernel's place
  EXPECT_THAT(run.out, HasSubstr("with_library: the reference runs at "));
  EXPECT_EQ(run.record.at("left_out").size(), 1u);
  EXPECT_THAT(run.out, HasSubstr("[more ran]"));
}

TEST(LabBench, VersusLibraryTimesOnlyTheReferenceAndTheLibrary) {
  version_calls = 0;
  const BenchRun run = run_bench({"--versus-library"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(rows(run),
              UnorderedElementsAre("with_library: the reference", "with_library: the library"));
  EXPECT_EQ(version_calls, 0);  // neither checked nor timed
  EXPECT_THAT(run.err, HasSubstr("without_library: no library row to compare with; left out"));
  ASSERT_EQ(run.record.at("versus_library").size(), 1u);
  EXPECT_GT(run.record.at("versus_library")[0].at("rounds").get<int>(), 2);
  EXPECT_THAT(run.out, HasSubstr("with_library: the reference runs at "));
  EXPECT_THAT(run.out, Not(HasSubstr("[more ran]")));  // the bench's extras are not the ratio
}

TEST(LabBench, ALibraryThatIsWrongHereIsLeftOutWithTheReason) {
  const BenchRun run = run_bench({"with_wrong_library"});
  ASSERT_EQ(run.code, 0) << run.err;  // the reference and its versions are timed all the same
  EXPECT_THAT(rows(run),
              UnorderedElementsAre("with_wrong_library: the reference", "with_wrong_library: v1"));
  const std::string reason =
      "gave a wrong result on this machine (1 of 1 wrong): it rounds differently";
  EXPECT_THAT(run.err, HasSubstr("with_wrong_library: the wrong library " + reason +
                                 "; left out of the table and the ratio"));
  // Where the ratio would be, why there is none; and the same in the record.
  EXPECT_THAT(run.out,
              HasSubstr("with_wrong_library: no ratio against the wrong library, which " + reason));
  EXPECT_TRUE(run.record.at("versus_library").empty());
  ASSERT_EQ(run.record.at("left_out").size(), 1u);
  EXPECT_EQ(run.record.at("left_out")[0].at("version"), "the wrong library");
  EXPECT_EQ(run.record.at("left_out")[0].at("reason"), reason);
}

TEST(LabBench, VersusLibraryWhenEveryLibraryIsWrongIsAnError) {
  const BenchRun run = run_bench({"--versus-library", "with_wrong_library"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("the wrong library gave a wrong result on this machine"));
  EXPECT_THAT(run.err, HasSubstr("every library baseline of the cases timed gave a wrong result"));
  EXPECT_TRUE(run.record.is_null());
}

TEST(LabBench, RoundsAsksForAtLeastThatManyRounds) {
  // The 0.01 s cap allows a few dozen rounds of these 30 ns kernels: 100 go past it.
  const BenchRun run = run_bench({"--versus-library", "--rounds", "100", "with_library"});
  ASSERT_EQ(run.code, 0) << run.err;
  ASSERT_EQ(run.record.at("versus_library").size(), 1u);
  EXPECT_GE(run.record.at("versus_library")[0].at("rounds").get<int>(), 100);
  EXPECT_EQ(run_bench({"--rounds", "2"}).code, 2);  // fewer than 3 gives no quartiles
}

TEST(LabBench, VersusLibraryWithNoLibraryInTheBuildIsAnError) {
  const BenchRun run = run_bench({"--versus-library", "without_library"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("no case timed has a library baseline in this build"));
  EXPECT_TRUE(run.record.is_null());  // nothing written: no table to show
}

TEST(LabBench, AnUnknownCaseIsAnError) {
  const BenchRun run = run_bench({"no_such_case"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("no case named 'no_such_case'"));
}

}  // namespace
