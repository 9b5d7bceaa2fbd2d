// main() of a GPU lab's perf worker (labNN_perf): the perf driver's worker and the stand-alone
// timer, both against the GPU's ceilings, and `--ncu`: the harness's timing of a case next to
// Nsight Compute's, with its Speed-of-Light figures and a verdict.
#include <workbook/cuda/ceilings.hpp>
#include <workbook/cuda/check.hpp>
#include <workbook/cuda/device.hpp>
#include <workbook/cuda/timer.hpp>
#include <workbook/internal/command_line.hpp>
#include <workbook/internal/cuda/ncu.hpp>
#include <workbook/internal/perf_worker.hpp>
#include <workbook/internal/subprocess.hpp>
#include <workbook/perf.hpp>
#include <workbook/report.hpp>
#include <workbook/skip.hpp>

#include <cuda_profiler_api.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

using namespace workbook;
namespace fs = std::filesystem;

const perf::Registered* find_case(const std::string& name) {
  for (const perf::Registered& r : perf::registry())
    if (r.name == name) return &r;
  throw std::invalid_argument("no perf case named '" + name + "'; --list shows them");
}

// Runs the kernel once on poisoned outputs and checks them; false, with the check's report in
// `wrong`, when it is wrong: its speed would mean nothing.
bool right_once(const perf::Kernel& kernel, std::string& wrong) {
  kernel.poison();
  kernel.run();
  const CheckResult r = kernel.verify();
  if (!r) wrong = r.report();
  return r.ok;
}

// The harness's own figure for a case, measured as the perf test measures it.
class HarnessCase : public perf::Case {
 public:
  using Case::Case;
  Timing timing;
  std::string wrong;  // the check's report, when the kernel is wrong

  void measure(const perf::Kernel& kernel) override {
    if (!right_once(kernel, wrong)) return;
    kernel.poison();
    timing = time_runs(perf::runner_of(kernel));
  }
};

// What runs under ncu: the case's kernel, `runs` times, between cudaProfilerStart and
// cudaProfilerStop, so that ncu (started with --profile-from-start off) sees those launches only:
// not the set-up, the check, nor the harness's L2 flushes (ncu flushes the caches itself).
class ProfiledCase : public perf::Case {
 public:
  ProfiledCase(std::string name, std::uint64_t seed, int runs)
      : Case(std::move(name), seed), runs_(runs) {}
  std::string wrong;

  void measure(const perf::Kernel& kernel) override {
    if (!right_once(kernel, wrong)) return;
    WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
    WORKBOOK_CUDA_CHECK(cudaProfilerStart());
    for (int i = 0; i < runs_; ++i) {
      kernel.run();
      WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
    }
    WORKBOOK_CUDA_CHECK(cudaProfilerStop());
  }

 private:
  int runs_;
};

int ncu_child(const std::string& name, int runs) {
  ProfiledCase c(name, seed_for(name), runs);
  find_case(name)->function(c);
  if (!c.wrong.empty()) {
    std::cerr << c.wrong;
    return 1;
  }
  return 0;
}

struct NcuOptions {
  std::vector<std::string> cases;
  std::string lab = "gpu";
  int runs = 5;
  std::string ceilings = cuda::default_ceilings_path();
  std::string results = results_dir().string();
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty()      ? 0
         : v.size() % 2 ? v[v.size() / 2]
                        : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// One case: 0 done, 1 failed, kSkipReturnCode when ncu is missing or may not read the counters.
int ncu_case(const std::string& self, const std::string& name, const NcuOptions& o,
             const Ceilings& ceilings) {
  std::cout << o.lab << " " << name << ": the harness's timing next to Nsight Compute's\n";
  HarnessCase harness(name, seed_for(name));
  find_case(name)->function(harness);
  if (!harness.wrong.empty()) {
    std::cout << "FAIL: the kernel is wrong, so its speed means nothing:\n" << harness.wrong;
    return 1;
  }
  const Analysis mine = analyze(harness.work(), harness.timing.summary.median, ceilings);
  std::cout << "  " << harness.description() << "\n  harness (" << workbook::cuda::gpu_timer()
            << ", L2 flushed): " << format_seconds(mine.seconds) << " median of "
            << harness.timing.summary.count << " runs, CV "
            << format_fixed(100 * harness.timing.summary.cv(), 2) << "%, " << format_fixed(mine.gbs)
            << " GB/s, " << format_percent(mine.fraction_of_roof) << " of the roofline ("
            << verdict(mine) << ")\n";

  const std::optional<std::string> ncu = cuda::ncu::find_ncu();
  if (!ncu) {
    std::cout << "  ncu (Nsight Compute) is not on the PATH: no counters to show. Install Nsight "
                 "Compute, or "
                 "set WORKBOOK_NCU to its ncu. The harness's figure above stands on its own.\n";
    return kSkipReturnCode;
  }
  const fs::path log = fs::temp_directory_path() /
                       ("workbook-ncu-" + std::to_string(getpid()) + "-" + name + ".log");
  Subprocess child({.argv = {*ncu,
                             "--profile-from-start",
                             "off",
                             "--target-processes",
                             "all",
                             "--clock-control",
                             "none",
                             "--cache-control",
                             "all",
                             "--metrics",
                             cuda::ncu::metric_list(),
                             "--csv",
                             "--page",
                             "raw",
                             "--print-units",
                             "base",
                             "--log-file",
                             log.string(),
                             self,
                             "--ncu-child",
                             name,
                             "--runs",
                             std::to_string(o.runs)}});
  const std::optional<Subprocess::Exit> exit = child.wait(600);
  const std::string text = read_text(log);
  fs::remove(log);
  if (const auto why = cuda::ncu::explain_failure(text)) {
    std::cout << "  " << *why << "\n";
    return kSkipReturnCode;
  }
  std::vector<cuda::ncu::Launch> launches;
  try {
    launches = cuda::ncu::parse_csv(text);
  } catch (const std::exception& e) {
    std::cout << "FAIL: ncu ran (" << (exit ? exit->describe() : "no exit status") << ") but "
              << e.what() << ". Its output:\n"
              << text.substr(0, 4000) << "\n";
    return 1;
  }
  if (launches.empty() || launches.size() % static_cast<std::size_t>(o.runs) != 0) {
    std::cout << "FAIL: ncu profiled " << launches.size()
              << " kernel launches, not a multiple of the " << o.runs << " runs asked for\n";
    return 1;
  }
  // A run may launch several kernels: merge each run's, then take the median run.
  const std::size_t per_run = launches.size() / static_cast<std::size_t>(o.runs);
  std::vector<double> durations;
  for (int r = 0; r < o.runs; ++r) {
    const std::vector<cuda::ncu::Launch> run(launches.begin() + r * per_run,
                                             launches.begin() + (r + 1) * per_run);
    durations.push_back(cuda::ncu::merge(run).seconds);
  }
  const cuda::ncu::Launch all = cuda::ncu::merge(launches);
  const double ncu_seconds = median(durations);
  const double difference = mine.seconds / ncu_seconds - 1;
  const cuda::ncu::Verdict v =
      cuda::ncu::classify(all.compute_pct, all.memory_pct, mine.fraction_of_roof);
  const double counted = harness.work().bytes, moved = all.dram_bytes / o.runs;

  Table t({"", "value"});
  t.add({"kernels per run", std::to_string(per_run) + ": " + all.kernel.substr(0, 60)});
  t.add({"ncu gpu__time_duration (median of " + std::to_string(o.runs) + ")",
         format_seconds(ncu_seconds)});
  t.add({std::string("harness (") + workbook::cuda::gpu_timer() + ") over ncu",
         (difference >= 0 ? "+" : "") + format_fixed(100 * difference, 1) + "%"});
  t.add({"Memory Throughput (SOL)", format_fixed(all.memory_pct, 1) + "%"});
  t.add({"Compute (SM) Throughput (SOL)", format_fixed(all.compute_pct, 1) + "%"});
  t.add({"DRAM throughput", format_fixed(all.dram_pct, 1) + "%"});
  t.add({"DRAM bytes per run (work model counts)",
         format_fixed(moved / 1e6) + " MB (" + format_fixed(counted / 1e6) + " MB)"});
  t.add({"L2 bytes per run", format_fixed(all.l2_bytes / o.runs / 1e6) + " MB"});
  if (all.load_sector_use_pct > 0)
    t.add({"bytes used of each loaded sector", format_fixed(all.load_sector_use_pct, 0) + "%"});
  t.add({"achieved occupancy", format_fixed(all.occupancy_pct, 0) + "%"});
  t.add({"registers per thread", format_fixed(all.registers, 0)});
  std::cout << t.str() << "  Verdict: " << v.text << ".\n";
  if (std::abs(difference) > 0.03)
    std::cout << (std::string(workbook::cuda::gpu_timer()) == "CUDA events"
                      ? "  (The harness's events also time their own recording on the GPU, 1.5-2 "
                        "us, which ncu's "
                        "duration leaves out: visible on kernels of a few microseconds.)\n"
                      : "  (CUPTI times the kernel from its first block's start to its last "
                        "block's end; ncu's "
                        "duration also counts the GPU's processing of the launch, about a "
                        "microsecond: visible on "
                        "kernels of a few microseconds.)\n");
  if (moved > 1.1 * counted)
    std::cout << "  The kernel moved " << format_fixed(moved / counted, 2)
              << "x the bytes the work model counts: reads repeated, or partly used cache lines.\n";

  nlohmann::json record = {{"lab", o.lab},
                           {"case", name},
                           {"description", harness.description()},
                           {"work_bytes", counted},
                           {"device", ceilings.device},
                           {"harness",
                            {{"median_s", mine.seconds},
                             {"cv", harness.timing.summary.cv()},
                             {"rel_iqr", harness.timing.summary.rel_iqr()},
                             {"runs", harness.timing.summary.count},
                             {"fraction_of_roof", mine.fraction_of_roof},
                             {"gbs", mine.gbs}}},
                           {"ncu",
                            {{"median_s", ncu_seconds},
                             {"durations_s", durations},
                             {"kernels_per_run", per_run},
                             {"kernels", all.kernel},
                             {"memory_sol_pct", all.memory_pct},
                             {"compute_sol_pct", all.compute_pct},
                             {"dram_pct", all.dram_pct},
                             {"dram_bytes_per_run", moved},
                             {"l2_bytes_per_run", all.l2_bytes / o.runs},
                             {"load_sector_use_pct", all.load_sector_use_pct},
                             {"occupancy_pct", all.occupancy_pct},
                             {"registers", all.registers}}},
                           {"harness_over_ncu", difference},
                           {"bound", to_string(v.bound)},
                           {"at_roofline", v.at_roofline},
                           {"verdict", v.text}};
  write_file(fs::path(o.results) / o.lab / (name + ".ncu.json"), record.dump(2) + "\n");
  return 0;
}

int ncu_main(const std::string& self, const NcuOptions& o) {
  cuda::require_device();
  const Ceilings ceilings = cuda::load_or_measure_ceilings(
      o.ceilings, false, [](const std::string& line) { std::cerr << "  " << line << "\n"; });
  std::vector<std::string> names = o.cases;
  if (names.empty())
    for (const perf::Registered& r : perf::registry()) names.push_back(r.name);
  int status = 0;
  for (const std::string& name : names) {
    const int s = ncu_case(self, name, o, ceilings);
    if (s == 1 || (s == kSkipReturnCode && status == 0)) status = s;
  }
  return status;
}

// /proc/self/exe: ncu must start this very program again, wherever it was called from.
std::string self_path(const char* argv0) {
  std::error_code error;
  const fs::path p = fs::read_symlink("/proc/self/exe", error);
  return error ? argv0 : p.string();
}

}  // namespace

int main(int argc, char** argv) {
  perf::WorkerOptions worker{
      .ceilings = cuda::default_ceilings_path()};  // the GPU's, cached apart from the CPU's
  NcuOptions ncu;
  bool with_ncu = false;
  std::string child;
  CLI::App app{
      "Times this build's GPU perf cases on the GPU's roofline; workbook-gpu-perf runs it as a "
      "worker "
      "(--worker). --ncu [case...] times each case with the harness and under Nsight Compute, side "
      "by side."};
  perf::add_worker_options(app, worker);
  auto* ncu_flag = app.add_flag("--ncu", with_ncu, "time the cases under Nsight Compute too");
  auto* child_option =
      app.add_option("--ncu-child", child, "(internal) the program ncu profiles: runs this case");
  app.add_option("--runs", ncu.runs, "kernel runs profiled by ncu")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--lab", ncu.lab, "the lab, for the record's folder (with --ncu)")
      ->needs(ncu_flag);
  app.add_option("--results", ncu.results, "the ncu record goes to RESULTS/LAB/CASE.ncu.json")
      ->needs(ncu_flag);
  child_option->excludes(ncu_flag);
  if (const std::optional<int> code = parse_command_line(app, argc, argv)) return *code;
  try {
    if (!child.empty()) return ncu_child(child, ncu.runs);
    if (with_ncu) {
      ncu.cases = worker.names;
      ncu.ceilings = worker.ceilings;
      return ncu_main(self_path(argv[0]), ncu);
    }
    return perf::run_worker_options(worker, [](const std::string& path) {
      return cuda::load_or_measure_ceilings(
          path, false, [](const std::string& line) { std::cerr << "  " << line << "\n"; });
    });
  } catch (const Skipped& e) {
    std::cout << e.what() << "\n";
    return kSkipReturnCode;
  } catch (const std::exception& e) {
    std::cerr << argv[0] << ": " << e.what() << "\n";
    return 2;
  }
}
