#pragma once
/// \file internal/perf_driver.hpp
/// \brief The perf test: times the student's kernel against the reference's in two worker
/// processes, interleaved, and explains the result on the roofline.
///
/// Without a reference worker (the student kit ships no solutions) it judges against the fraction
/// of its roofline the reference reached when the kit was made (a reference profile): on any
/// machine, the reference's expected time is roofline_seconds(work) / fraction.

#include <workbook/ceilings.hpp>
#include <workbook/internal/perf_verdict.hpp>
#include <workbook/perf.hpp>
#include <workbook/timing.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <vector>

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
  std::string edit;               ///< the file the student edits, for messages
  double max_ratio = 1.25;        ///< pass when student time / reference time is at most this
  std::uint64_t seed = 0;         ///< inputs (both workers draw the same)
  /// How long to time the comparison (`workbook-perf --max-seconds` sets max_seconds).
  TimingOptions timing = {.warmup_seconds = 0.2, .max_seconds = 3.0, .batch_seconds = 0.1};
  double timeout_seconds = 300;  ///< longest a worker may take to answer one command
  /// A worker whose step takes this long, or far longer than it should where that is more (by
  /// the reference's set-up, or its own earlier calls), is stopped, with what its threads were
  /// doing (see perf_driver.cpp).
  double stall_seconds = 10;
  /// Where the roofs come from; empty: the CPU's, load_or_measure_ceilings(ceilings_path). The GPU
  /// driver (workbook-gpu-perf) loads the GPU's. May throw workbook::Skipped (no GPU here).
  std::function<Ceilings(const Progress&)> load_ceilings;
  /// For a case judged too slow and under half its roof: more evidence of why, one sentence each,
  /// added to the verdict's notes (the GPU driver measures the student's kernel under Nsight
  /// Compute where ncu can read the counters). Unset: none.
  std::function<std::vector<std::string>()> explain_slow;
};

/// How the driver compares the two workers' copies of a timed call's output, as the reference's
/// worker declared it (see perf::Output).
struct OutputCheck {
  Element element = Element::f32;            ///< the type of each element
  std::size_t count = 0;                     ///< how many
  Tolerance tolerance = Tolerance::exact();  ///< the case's own check's
  bool scaled = false;  ///< a scale per element (floats) comes with the reference's output
};

/// Where the student's output differs from the reference's beyond the bound (see perf::Output).
struct OutputDifference {
  std::size_t differing = 0;   ///< elements beyond the bound
  std::size_t first = 0;       ///< the index of the first of them
  double yours = 0;            ///< the student's value there
  double reference = 0;        ///< the reference's
  double allowed = 0;          ///< the largest difference allowed there
  bool never_written = false;  ///< the student's element is still the poison
};

/// Compares every element of two outputs laid out as `check` says (`scale`: check.count floats
/// when check.scaled, else empty): both NaN (the student's not the poison), equal, or
/// |yours - reference| <= 2 (rel scale + abs), scale defaulting to the larger magnitude of the two.
/// Empty when they agree.
std::optional<OutputDifference> compare_outputs(const OutputCheck& check,
                                                std::span<const std::byte> yours,
                                                std::span<const std::byte> reference,
                                                std::span<const float> scale);

/// The failure a difference means, for the student: what differs, and what it says about the
/// kernel.
std::string describe(const OutputCheck& check, const OutputDifference& difference);

/// What the driver saw of one comparison, which grade() judges. Times are seconds per call.
struct Evidence {
  double yours_reported = 0;  ///< the median of the times the student's worker reported
  /// The median of the driver's clock per call over the student's timed batches: a report can be
  /// refuted only where its calls took longer than it says (0 without a reference worker).
  double yours_clock = 0;
  double reference_reported = 0;  ///< the reference's (its expected time without a worker)
  /// One interleaved round of the comparison (a loaded machine slows both workers in it alike):
  /// each worker's median reported time per call, and the driver's clock per call of its batches.
  struct Round {
    double yours_reported = 0, yours_clock = 0;
    double reference_reported = 0, reference_clock = 0;
  };
  std::vector<Round> rounds;  ///< empty without a reference worker
  /// The harness's own time per call (channel, a GPU's L2 flush): the least, over the reference's
  /// timed batches, of the driver's clock per call less the reference's reported median (0
  /// without a reference worker).
  double harness_overhead = 0;
  std::string apart;  ///< how each worker was frozen while the other was timed
  CpuAccount yours_cpu, reference_cpu;
  /// One set of fresh inputs: each worker's first call on them and the median of the round of
  /// calls after it, as reported (a single call's round trip on a loaded machine is mostly
  /// waiting to be scheduled; a worker that misreports is caught by the rounds' clocks).
  struct FreshSet {
    double yours_first = 0, yours_repeat = 0;
    double reference_first = 0, reference_repeat = 0;
  };
  std::vector<FreshSet> fresh;
};

/// What the verdict is judged by: the student's time never below what the driver's clock says
/// (beyond its noise), and raised to the honest figure
/// when its process's CPU time exceeds what the case's threads can do in the time its calls took,
/// or when its first calls on fresh inputs are slower, against its later calls, than the
/// reference's are (the thresholds and their margins are explained where they are defined).
Graded grade(const Evidence& evidence);

/// The next step when each call of the student's kernel touched much fresh memory and the
/// reference's did not (`reference` counted no call: judged by `yours` alone): memory allocated, or
/// an input copied, on every call costs a page fault per page and a pass over it, which no advice
/// about the loop fixes. Empty when the pages say nothing.
std::optional<std::string> fresh_memory_note(const std::string& function, const Work& work,
                                             const CpuAccount& yours, const CpuAccount& reference);

/// What a stalled worker's process was doing, from one second of it: its CPU seconds and its
/// threads' context switches per second (asleep, handing the CPU back and forth, or running flat
/// out), as the stopped worker's message says it.
std::string stalled_reading(double cpu_per_second, double switches_per_second);

/// Runs the perf test and returns its verdict; prints to `out` only what it does while it measures
/// (the test's name, the ceilings, a second attempt). Writes no file: the reporters of
/// perf_verdict.hpp show the verdict.
Verdict judge(const DriverOptions& options, std::ostream& out);

/// The perf test as workbook-perf runs it: judge(), then the verdict's files (write_results) and
/// its account on `out` (print). exit_code(verdict) is the test's exit code: 0 pass, 1 fail (too
/// slow, wrong, not implemented, crashed, timed out), 2 a problem of the setup itself,
/// kSkipReturnCode (77) when the case cannot run on this machine (no GPU).
Verdict drive(const DriverOptions& options, std::ostream& out);

}  // namespace workbook::perf
