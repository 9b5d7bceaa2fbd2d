#pragma once
/// \file internal/perf_verdict.hpp
/// \brief The result of one perf test as a value: what the driver measured and judged, computed
/// once (workbook::perf::drive), written once as JSON (results/LAB/CASE.json), and rendered only at
/// the edges by reporters: the console, Markdown, the SVG roofline, and the grader's feedback.
///
/// As google/benchmark has one Run type and several reporters: nothing downstream parses a
/// report, re-reads the workload or recomputes the roofline; it reads these fields.

#include <workbook/ceilings.hpp>
#include <workbook/internal/ceilings_json.hpp>
#include <workbook/internal/work_json.hpp>
#include <workbook/roofline.hpp>
#include <workbook/stats.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// std::optional as JSON: null when empty (nlohmann 3.11.2 has no serializer of its own for it).
namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null())
      v.reset();
    else
      v = j.get<T>();
  }
};
}  // namespace nlohmann

namespace workbook {

// Work, Traffic and Compute: internal/work_json.hpp.
NLOHMANN_JSON_SERIALIZE_ENUM(Bound, {{Bound::memory, "memory"},
                                     {Bound::compute, "compute"},
                                     {Bound::underutilized, "underutilized"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Hint, below, text)

// The records' shapes of Summary (with rel_iqr and cv) and Analysis (flat, the roofs named), as
// report.hpp's to_json writes them. Ceilings: internal/ceilings_json.hpp.
void to_json(nlohmann::json& j, const Summary& s);
void from_json(const nlohmann::json& j, Summary& s);
void to_json(nlohmann::json& j, const Analysis& a);
void from_json(const nlohmann::json& j, Analysis& a);

}  // namespace workbook

namespace workbook::perf {

/// How a perf test ended: the record's "outcome", and the exit code of workbook-perf.
enum class Outcome {
  pass,      ///< within max_ratio of the reference's time (exit 0)
  fail,      ///< too slow, wrong, not implemented, crashed, timed out (exit 1)
  error,     ///< a problem of the setup, not of the student's code (exit 2)
  skipped,   ///< cannot run on this machine, e.g. no GPU (exit kSkipReturnCode)
  recorded,  ///< --record-profile: the student's worker timed alone, its fraction recorded (exit 0)
};
NLOHMANN_JSON_SERIALIZE_ENUM(Outcome, {{Outcome::pass, "pass"},
                                       {Outcome::fail, "fail"},
                                       {Outcome::error, "error"},
                                       {Outcome::skipped, "skipped"},
                                       {Outcome::recorded, "recorded"}})

/// Why, more precisely.
enum class Reason {
  ok,                    ///< passed
  too_slow,              ///< right, but beyond max_ratio
  not_implemented,       ///< the kernel throws NotImplemented
  wrong,                 ///< wrong results, before the timing or after it
  crashed,               ///< a worker died
  timeout,               ///< a worker did not answer in time
  worker_error,          ///< a worker failed otherwise (an exception, a malformed reply)
  timed_output_differs,  ///< the output of a timed call is not the reference's
  output_tampered,       ///< the student's worker kept the output's shared memory writable
  skipped,               ///< nothing to run here
  reference_failed,      ///< the reference's worker failed: the workbook's bug
  mismatch,              ///< the two workers describe different work
  profile,               ///< recorded a profile, or could not read the one to judge by
};
NLOHMANN_JSON_SERIALIZE_ENUM(Reason, {{Reason::ok, "ok"},
                                      {Reason::too_slow, "too_slow"},
                                      {Reason::not_implemented, "not_implemented"},
                                      {Reason::wrong, "wrong"},
                                      {Reason::crashed, "crashed"},
                                      {Reason::timeout, "timeout"},
                                      {Reason::worker_error, "error"},
                                      {Reason::timed_output_differs, "timed_output_differs"},
                                      {Reason::output_tampered, "output_tampered"},
                                      {Reason::skipped, "skipped"},
                                      {Reason::reference_failed, "reference_failed"},
                                      {Reason::mismatch, "mismatch"},
                                      {Reason::profile, "profile"}})

/// One worker's kernel, timed.
struct Side {
  Summary timing;  ///< the times the worker reported (for the reference without a worker: expected)
  Analysis analysis;  ///< timing.median on the roofline
  /// The driver's own clock of every batch (round trip / calls), warm-up included: the student's.
  std::vector<double> driver_seconds;
  /// The driver's clock of the timed batches only (no warm-up, not the checked batch).
  std::vector<double> driver_timed_seconds;
  bool expected_from_profile =
      false;  ///< the reference's time is roofline time / recorded fraction
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Side, timing, analysis, driver_seconds,
                                                driver_timed_seconds, expected_from_profile)

/// The driver's own clock, which code under test cannot forge: medians of the timed batches.
struct DriverClock {
  double yours = 0;                  ///< the student's median, seconds (0: none)
  double reference = 0;              ///< the reference's (its expected time in profile mode)
  double ratio = 0;                  ///< yours / reference, 0 when either is missing
  std::optional<Analysis> analysis;  ///< the student's kernel at `yours` on the roofline
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DriverClock, yours, reference, ratio, analysis)

/// A library baseline or a variant of the student's kernel, timed after the comparison.
struct ExtraResult {
  std::string label;
  Summary timing;
  Analysis analysis;
  double time_over_yours = 0;     ///< its median / the student's
  std::optional<double> speedup;  ///< the student's kernel on one thread: its time / yours
  std::optional<double> parallel_efficiency;  ///< speedup / threads
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExtraResult, label, timing, analysis,
                                                time_over_yours, speedup, parallel_efficiency)

/// Times per item, for a case made of many items per call (tasks, images).
struct PerItem {
  double items = 0;
  std::string item;
  double student_seconds = 0, reference_seconds = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PerItem, items, item, student_seconds,
                                                reference_seconds)

/// A worker's CPU time over its timed batches, against the driver's clock of the same windows:
/// every thread and child of the worker counts, so work finished by a thread after a call
/// returned, or done between calls, shows here though no call's time includes it.
struct CpuAccount {
  double cpu_seconds = 0;      ///< user + system time of the whole process tree in its windows
  double window_seconds = 0;   ///< the driver's clock of the same windows (thaw to freeze)
  double outside_seconds = 0;  ///< CPU time between its windows (frozen: none)
  int calls = 0;               ///< calls made in the windows
  unsigned threads = 1;        ///< the threads the case allows (Work::threads)
  /// Minor page faults of the worker over its kernel's timed batches, kept apart or not, and the
  /// calls of those batches: pages touched for the first time, as memory allocated in a call is.
  long page_faults = 0;
  int faulted_calls = 0;
  /// Cores busy on average in the windows.
  double cores() const { return window_seconds > 0 ? cpu_seconds / window_seconds : 0; }
  /// Fresh pages touched per call (0 when no batch was counted).
  double pages_per_call() const {
    return faulted_calls > 0 ? static_cast<double>(page_faults) / faulted_calls : 0;
  }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CpuAccount, cpu_seconds, window_seconds,
                                                outside_seconds, calls, threads, page_faults,
                                                faulted_calls)

/// The first call on inputs no call has seen (the case set up again from a new seed in both
/// workers), against the calls after it on the same inputs: a kernel that keeps results between
/// calls is slow only on the first. Medians over the sets of inputs, seconds per call.
struct FreshInputs {
  int sets = 0;  ///< how many times the inputs were drawn afresh
  double yours_first = 0, yours_repeat = 0;
  double reference_first = 0, reference_repeat = 0;
  /// yours_first / reference_first: both first calls on the same inputs.
  double first_ratio() const { return reference_first > 0 ? yours_first / reference_first : 0; }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FreshInputs, sets, yours_first, yours_repeat,
                                                reference_first, reference_repeat)

/// What the verdict is judged by (and the grader scores): the student's time as the driver saw it,
/// never below the driver's own clock (a worker's reported time only shows on the console), raised
/// to the honest figure when its CPU time or its first calls on fresh inputs say it did more work
/// than its calls' times show.
struct Graded {
  double seconds = 0;            ///< the student's time per call
  double reference_seconds = 0;  ///< the reference's (its expected time in profile mode)
  double ratio = 0;              ///< seconds / reference_seconds: what passes and what is scored
  double reported_ratio = 0;     ///< the same from the times the workers reported (a hint)
  std::string apart;             ///< how each worker was stopped while the other was timed
  CpuAccount yours, reference;
  std::optional<FreshInputs> fresh;  ///< empty without a reference worker
  /// Each flag: what was observed and what it changed, one sentence; empty when nothing was.
  std::vector<std::string> flags;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Graded, seconds, reference_seconds, ratio,
                                                reported_ratio, apart, yours, reference, fresh,
                                                flags)

/// What the driver's comparison of a timed call's output with the reference's found.
struct TimedOutputCheck {
  bool checked = false;
  std::string why;  ///< when not checked
  std::size_t elements = 0;
  int student_batch = -1, reference_batch = -1;  ///< the batches compared
  std::size_t differing = 0;
  std::optional<std::size_t> first;  ///< the first differing element
  std::optional<double> yours, expected;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimedOutputCheck, checked, why, elements,
                                                student_batch, reference_batch, differing, first,
                                                yours, expected)

/// The reference profile a verdict without a reference worker was judged by.
struct ProfileUse {
  std::string path;
  double fraction_of_roof = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProfileUse, path, fraction_of_roof)

/// One perf test's result. Fields that a run did not reach (a kernel that crashed has no timing)
/// are empty.
struct Verdict {
  // What was compared (the driver's options).
  std::string lab;              ///< "lab01"
  std::string case_name;        ///< "relu"
  std::string edit;             ///< the file the student edits
  std::uint64_t seed = 0;       ///< the case's inputs
  std::uint64_t base_seed = 0;  ///< WORKBOOK_SEED, to replay the inputs
  double max_ratio = 1.25;      ///< within this passes
  std::string results;          ///< the folder of CASE.json, .md and .svg (results/LAB)
  std::string ceilings_path;    ///< the ceilings' cache, to re-measure them

  Outcome outcome = Outcome::error;
  Reason reason = Reason::worker_error;
  std::string message;  ///< why it failed, was skipped or is an error; empty on a pass

  std::optional<Ceilings> ceilings;   ///< the roofs it was judged by
  std::string function, description;  ///< as the case describes itself
  std::optional<Work> work;           ///< one call's

  int rounds = 0;                             ///< interleaved rounds of the comparison
  std::vector<double> ratios;                 ///< each round's ratio
  std::optional<double> first_attempt_ratio;  ///< when a slow first pair was measured again
  std::optional<Side> student, reference;
  std::string reference_label;        ///< "reference", or "reference (expected)" from a profile
  std::optional<Summary> ratio;       ///< the student's time / the reference's
  std::string ratio_note;             ///< how the ratio was measured
  std::optional<DriverClock> clock;   ///< the driver's own clock
  std::optional<Graded> graded;       ///< what the verdict is judged by (see Graded)
  std::optional<ProfileUse> profile;  ///< without a reference worker

  std::vector<ExtraResult> extras;
  std::optional<PerItem> per_item;
  std::vector<std::string> notes;  ///< per item and speedups, one line each
  std::optional<TimedOutputCheck> output_check;
  std::string next;  ///< the hint chosen for the student's kernel

  /// The perf test's name: "lab01.perf.relu".
  std::string test() const { return lab + ".perf." + case_name; }
  /// Both kernels timed and compared: the table, the ratio and the roofline can be shown.
  bool judged() const { return student && reference && ratio && work; }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Verdict, lab, case_name, edit, seed, base_seed,
                                                max_ratio, results, ceilings_path, outcome, reason,
                                                message, ceilings, function, description, work,
                                                rounds, ratios, first_attempt_ratio, student,
                                                reference, reference_label, ratio, ratio_note,
                                                clock, graded, profile, extras, per_item, notes,
                                                output_check, next)

/// workbook-perf's exit code: 0 pass or recorded, 1 fail, 2 error, kSkipReturnCode skipped.
int exit_code(const Verdict& verdict);

// --- Reporters: each a function of the verdict
// -----------------------------------------------------

/// The console's account of the verdict (after the lines the driver prints while it measures).
void print(const Verdict& verdict, std::ostream& out);
/// The Markdown feedback of a judged verdict; `plot`: with the link to CASE.svg under it.
std::string markdown(const Verdict& verdict, bool plot = true);
/// The SVG roofline of a judged verdict: the student's kernel, the reference's and the extras.
std::string roofline_plot(const Verdict& verdict);
/// Writes results/LAB/CASE.json (the verdict), and for a judged verdict CASE.md and CASE.svg.
void write_results(const Verdict& verdict);

}  // namespace workbook::perf
