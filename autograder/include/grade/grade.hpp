#pragma once
/// \file grade.hpp
/// \brief Grading one submission: its whitelisted files copied into a fresh workspace beside the
/// trusted build, each lab compiled, linked and run on its own, in the sandbox, and scored by the
/// lab's rubric.

#include <grade/prepare.hpp>
#include <grade/rubric.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace workbook::grade {

/// One graded test: a line of results.json.
struct Item {
  std::string lab;        ///< "01"
  Source source = Source::visible;
  std::string test;       ///< "Relu.InPlace", or the perf case "relu"
  std::string function;   ///< what it grades ("relu")
  double score = 0;
  double max_score = 0;
  std::string status;     ///< passed, failed, skipped (not graded), not_run
  std::string output;     ///< Markdown, for the student
  std::string visibility = "visible";
  bool gate = false;
  bool forfeit = false;  ///< an integrity check: failing it forfeits the function (see Rule::forfeit)
  double seconds = 0;
  nlohmann::json details = nlohmann::json::object();  ///< perf figures, flags

  std::string name() const;  ///< "lab01 Relu.InPlace", "lab01 hidden Relu.InPlace", "lab01 perf relu"
};

/// The exit code of `grade` when the submission was graded but a lab it asked for could not be
/// graded on this machine (not buildable here, or every test skipped itself: a GPU lab without a GPU).
inline constexpr int kExitLabsNotGraded = 3;

struct LabResult {
  std::string number, folder, title;
  /// graded, not_graded (nothing could run here: every test skipped itself), not_submitted,
  /// compile_error, symbol_error, link_error, unavailable, error
  std::string status = "graded";
  std::string build_output;  ///< the compiler's or linker's first errors, paths as the student sees them
  double score = 0, max_score = 0;
  std::vector<Item> items;
  double seconds = 0;
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, std::string>> plots;  ///< perf case -> SVG roofline
};

struct SubmittedFile {
  std::string path;  ///< labs/01_vectorized_relu/vector_ops.cpp
  std::uint64_t bytes = 0;
  std::string hash;
};

struct GradeResult {
  std::string id;
  std::string submission;
  std::string started_at;
  double seconds = 0;
  double score = 0, max_score = 0;
  std::uint64_t seed = 0;
  std::string cache_key;
  nlohmann::json isolation;
  nlohmann::json ceilings;  ///< the machine's ceilings the perf cases were judged by (for class plots)
  std::vector<SubmittedFile> files;
  std::vector<LabResult> labs;
  std::vector<std::string> warnings;  ///< for the instructor (not for the student)

  nlohmann::json to_json() const;
  static GradeResult from_json(const nlohmann::json& j);
};

struct GradeOptions {
  fs::path submission;   ///< a folder, an archive (.zip, .tar, .tar.gz, .tgz), or @reference / @stub
  fs::path cache;
  fs::path out;          ///< where the outputs go (results.json, report.md, ...)
  fs::path work;         ///< where workspaces are made (removed after)
  std::string id;        ///< the submission's name in the gradebook
  std::vector<std::string> labs;  ///< numbers; empty: every lab of the cache
  int slot = 0;          ///< sandbox user slot (batch jobs use 0..N-1)
  int jobs = 2;          ///< visible tests run in parallel
  bool perf = true;
  bool perf_lock = true; ///< time kernels only while no other grading job runs (batch)
  std::optional<double> perf_seconds;      ///< overrides the rubric's timing budget
  std::optional<double> perf_full_within;  ///< overrides every perf rule (the self-test's margin)
  std::optional<double> perf_zero_at;
  std::optional<double> test_timeout;      ///< overrides the rubric's per-test timeout
  std::optional<std::uint64_t> seed;       ///< default: a fresh one, recorded
  bool keep_work = false;
  std::string gradescope;    ///< write results.json here too (Gradescope's path)
  std::string prairielearn;  ///< write PrairieLearn's results.json here
};

/// Grades a submission and writes every output. Progress goes to `log`. Throws only for a problem
/// of the grader or its cache (a bad submission is a score, not an error).
GradeResult grade(const GradeOptions& options, std::ostream& log);

/// The launcher the perf driver runs instead of the student's worker: the sandbox, then the worker.
/// argv: SPEC.json [worker arguments...]. Returns the worker's exit status.
int sandbox_exec(const std::vector<std::string>& args);

/// A lock that lets timing run alone: shared while compiling and testing, exclusive while timing
/// (with writer preference, so timing is not starved by a stream of other jobs).
class PhaseLock {
 public:
  PhaseLock(const fs::path& cache, bool exclusive);
  ~PhaseLock();
  PhaseLock(const PhaseLock&) = delete;
  PhaseLock& operator=(const PhaseLock&) = delete;

 private:
  int gate_ = -1, lock_ = -1;
};

}  // namespace workbook::grade
