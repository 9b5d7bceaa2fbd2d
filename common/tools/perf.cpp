// workbook-perf: the perf test of one case. Times the student's kernel against the reference's in
// two worker processes, interleaved, and prints where the kernel stands on the roofline.
// Built twice: workbook-gpu-perf (WORKBOOK_PERF_GPU=1) judges GPU cases against the GPU's roofs.
#include <workbook/internal/command_line.hpp>
#include <workbook/internal/perf_driver.hpp>
#include <workbook/internal/perf_verdict.hpp>
#include <workbook/report.hpp>
#include <workbook/seed.hpp>
#if WORKBOOK_PERF_GPU
#include <workbook/cuda/ceilings.hpp>
#include <workbook/internal/cuda/ncu.hpp>
#include <workbook/internal/subprocess.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>
#endif

#include <cstdlib>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#if WORKBOOK_PERF_GPU
namespace {

// A slow kernel's memory traffic, measured: the student's worker runs the case once under Nsight
// Compute (`labNN_perf --ncu CASE`, quietly, at most 3 minutes) and its record is read. Nothing
// where ncu is missing or may not read the counters (the worker then exits 77 and writes none).
std::vector<std::string> measured_traffic(const workbook::perf::DriverOptions& o) {
  namespace fs = std::filesystem;
  const fs::path folder =
      fs::temp_directory_path() / ("workbook-ncu-hint-" + std::to_string(getpid()));
  std::vector<std::string> notes;
  try {
    workbook::Subprocess worker(
        {.argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" >/dev/null 2>&1", o.student, "--ncu",
                  o.case_name, "--runs", "1", "--lab", o.lab, "--results", folder.string(),
                  "--ceilings", o.ceilings_path}});
    const auto exit = worker.wait(180);
    const fs::path record = folder / o.lab / (o.case_name + ".ncu.json");
    if (exit && exit->exited && exit->code == 0 && fs::exists(record)) {
      std::ostringstream text;
      text << std::ifstream(record).rdbuf();
      notes = workbook::cuda::ncu::traffic_notes(text.str());
    }
  } catch (const std::exception&) {  // no evidence is not an error of the perf test
  }
  std::error_code ignored;
  fs::remove_all(folder, ignored);
  return notes;
}

}  // namespace
#endif

int main(int argc, char** argv) {
  workbook::perf::DriverOptions o;
  o.ceilings_path = workbook::default_ceilings_path();
#if WORKBOOK_PERF_GPU
  o.ceilings_path = workbook::cuda::default_ceilings_path();
#endif
  std::string results = workbook::results_dir().string();

  CLI::App app{
      "The perf test of one case: times the student's kernel (a lab's perf executable, labNN_perf) "
      "against the reference's, side by side, and explains the result on the roofline. Exit code "
      "0: "
      "within --max-ratio of the reference; 1: not (or wrong, not implemented, crashed); 2: a "
      "setup "
      "problem; 77: cannot run here (no GPU)."};
  app.add_option("--lab", o.lab, "the lab, e.g. lab01")->required();
  app.add_option("--case", o.case_name, "the perf case, e.g. relu")->required();
  app.add_option("--student", o.student, "the worker built with the student's kernels")->required();
  auto* reference =
      app.add_option("--reference", o.reference, "the worker built with the reference's");
  auto* profile =
      app.add_option("--profile", o.profile, "judge by this reference profile (JSON) instead");
  auto* record = app.add_option(
      "--record-profile", o.record_profile,
      "time --student alone and record its fraction of the roofline in this profile");
  reference->excludes(profile);
  app.add_option("--max-ratio", o.max_ratio,
                 "passes when your time / the reference's is at most this")
      ->capture_default_str();
  app.add_option("--edit", o.edit, "the file the student edits, for messages");
  app.add_option("--ceilings", o.ceilings_path, "the ceilings' cache (measured when missing)")
      ->capture_default_str();
  app.add_option("--results", results, "JSON, Markdown and SVG go to RESULTS/LAB/CASE.*")
      ->capture_default_str();
  app.add_option("--max-seconds", o.timing.max_seconds, "how long to time the comparison")
      ->capture_default_str();
  app.add_option("--timeout", o.timeout_seconds, "the longest a worker may take to answer")
      ->capture_default_str();
  const std::optional<int> code = workbook::parse_command_line(app, argc, argv, [&] {
    if (reference->count() + profile->count() + record->count() == 0)
      throw CLI::RequiredError(
          "one of --reference, --profile and --record-profile (what to judge by)");
  });
  if (code) return *code;
  try {
    o.results = results;
    o.seed = workbook::seed_for(o.lab + "." + o.case_name);
#if WORKBOOK_PERF_GPU
    o.load_ceilings = [&o](const workbook::Progress& progress) {
      return workbook::cuda::load_or_measure_ceilings(o.ceilings_path, false, progress);
    };
    if (std::getenv("WORKBOOK_NCU_HINTS") == nullptr ||
        std::string(std::getenv("WORKBOOK_NCU_HINTS")) != "0")
      o.explain_slow = [&o] { return measured_traffic(o); };
#endif
    return workbook::perf::exit_code(workbook::perf::drive(o, std::cout));
  } catch (const std::exception& e) {
    std::cerr << "workbook-perf: " << e.what() << "\n";
    return 2;
  }
}
