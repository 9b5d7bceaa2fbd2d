#pragma once
/// \file perf_driver.hpp
/// \brief The perf test: times the student's kernel against the reference's in two worker
/// processes, interleaved, and explains the result on the roofline.
///
/// Without a reference worker (the student kit ships no solutions) it judges against the fraction
/// of its roofline the reference reached when the kit was made (a reference profile): on any
/// machine, the reference's expected time is roofline_seconds(work) / fraction.

#include <workbook/ceilings.hpp>
#include <workbook/timing.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>

namespace workbook::perf {

/// What one perf test compares, where the results go, and when it passes (set by the build system,
/// from the lab's CMakeLists.txt, on the `workbook-perf` command line).
struct DriverOptions {
  std::string lab;             ///< "lab01"
  std::string case_name;       ///< "relu"
  std::string student;         ///< worker executable built with the student's kernels
  std::string reference;       ///< worker built with the reference's, or empty
  std::string profile;         ///< reference profile (JSON) to judge by when there is no reference
  std::string record_profile;  ///< instead of judging: time `student` alone and record its
                               ///< fraction of the roofline in this profile
  std::string ceilings_path;   ///< the ceilings cache (measured if missing)
  std::filesystem::path results;  ///< JSON, SVG and Markdown go to `results/LAB/CASE.*`
  std::string edit;            ///< the file the student edits, for messages
  double max_ratio = 1.25;     ///< pass when student time / reference time is at most this
  std::uint64_t seed = 0;      ///< inputs (both workers draw the same)
  /// How long to time the comparison (`workbook-perf --max-seconds` sets max_seconds).
  TimingOptions timing = {.warmup_seconds = 0.2, .max_seconds = 3.0, .batch_seconds = 0.1};
  double timeout_seconds = 300;  ///< longest a worker may take to answer one command
  /// Where the roofs come from; empty: the CPU's, load_or_measure_ceilings(ceilings_path). The GPU
  /// driver (workbook-gpu-perf) loads the GPU's. May throw workbook::Skipped (no GPU here).
  std::function<Ceilings(const Progress&)> load_ceilings;
};

/// Runs the perf test and prints its feedback to `out`. Returns the exit code: 0 pass, 1 fail
/// (too slow, wrong, not implemented, crashed, timed out), 2 a problem of the setup itself,
/// kSkipReturnCode (77) when the case cannot run on this machine (no GPU).
int drive(const DriverOptions& options, std::ostream& out);

}  // namespace workbook::perf
