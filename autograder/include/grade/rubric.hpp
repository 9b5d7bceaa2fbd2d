#pragma once
/// \file rubric.hpp
/// \brief A lab's rubric: points per test, visibility, gates, perf tiers and limits
/// (autograder/labs/NN_topic/rubric.json; see autograder/README.md for the format).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace workbook::grade {

/// Where a graded test comes from.
enum class Source {
  visible,  ///< the lab's GoogleTest tests (labs/NN/tests), run in the student's process
  hidden,   ///< the autograder's sealed tests: checked in a process without student code
  perf,     ///< a perf case, timed against the reference by the grader's clock
};
const char* to_string(Source source);
Source source_from_string(const std::string& text);

/// How a skipped test (no GPU on this machine) counts.
enum class SkipPolicy {
  exclude,  ///< "not graded": 0 of 0, out of the maximum
  zero,     ///< 0 of its points
};

/// Perf points: full within `full_within` x the reference's time, none from `zero_at` x, in
/// between linear in the ratio (or in its logarithm).
struct PerfScale {
  double full_within = 1.2;
  double zero_at = 4.0;
  bool logarithmic = false;
  /// A kernel faster than the reference by more than this factor (time ratio below it) AND above
  /// `implausible_roof` of the machine's measured roofline skips work or reuses results between
  /// calls: no perf points, flagged for the instructor.
  double implausible_ratio = 0.5;
  double implausible_roof = 1.2;
  double max_seconds = 3.0;  ///< timing budget of one comparison (the driver's max_seconds)

  /// The fraction of the points a ratio earns, in [0, 1].
  double fraction(double ratio) const;
};

struct Rule {
  Source source = Source::visible;
  std::string match;     ///< glob over "Suite.Test" (visible, hidden) or the case name (perf)
  std::string function;  ///< the lab function it grades; default: derived from the name
  double points = 1;
  std::string visibility;  ///< Gradescope: visible, hidden, after_due_date, after_published
  /// A gate: if any test under this rule fails, the visible and perf points of the same function
  /// are not credited (the sealed tests guard the tests that run in the student's process).
  bool gate = false;
  /// An integrity check (results fresh at each call, inputs left unchanged): if a test under this
  /// rule fails, the function earns nothing at all, its other hidden tests included. Implies gate.
  bool forfeit = false;
  std::optional<PerfScale> perf;  ///< per-rule perf tiers (perf rules only)
};

struct Rubric {
  std::string lab;   ///< "01"
  std::string path;  ///< where it was read from; empty for the default rubric
  std::string title;
  std::vector<Rule> rules;
  std::string visibility = "visible";
  SkipPolicy skipped = SkipPolicy::exclude;
  /// A visible test that skips itself is "not graded" only when its skip message says one of
  /// these (the student's code runs in that process and could skip a test it would fail).
  std::vector<std::string> skip_reasons = {"no CUDA device"};
  double test_timeout_seconds = 60;  ///< one test process (visible), one call (hidden)
  double compile_seconds = 300;
  double lab_seconds = 1200;  ///< the whole lab, perf included
  std::uint64_t memory_bytes = 4ull << 30;
  unsigned processes = 64;
  std::uint64_t file_bytes = 64ull << 20;
  std::size_t output_keep_bytes = 32 << 10;
  std::size_t max_source_bytes = 1 << 20;  ///< a student file larger than this is refused
  PerfScale perf;
  std::vector<std::string> extra_files;  ///< student files besides the lab's SOURCES (required)
  /// Patterns of files a student may add next to their sources (helper headers: "*.hpp"); a file
  /// the lab itself provides (its interface header) is never taken from a submission.
  std::vector<std::string> optional_files;
  std::vector<std::string>
      allowed_symbols;  ///< regexes of extra global symbols a submission may define

  /// The rule for a test, or nullptr when none matches (the test then counts 0 of 0).
  const Rule* find(Source source, const std::string& name) const;
  /// The rule's function, or one derived from the name ("SquaredDifference.Tail" ->
  /// squared_difference).
  static std::string function_of(const Rule* rule, Source source, const std::string& name);

  /// Reads a rubric; throws std::runtime_error with the path and the problem (unknown keys too).
  static Rubric load(const std::string& path, const std::string& lab);
  /// Without a rubric file: 1 point per visible test, 2 per perf case, no hidden tests, no gates.
  static Rubric default_for(const std::string& lab);
  nlohmann::json to_json() const;
};

}  // namespace workbook::grade
