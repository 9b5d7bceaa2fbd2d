#pragma once
/// \file options.hpp
/// \brief How one submission is graded: where it is, which cache and labs, and where the outputs
/// go.

#include <grade/cgroup.hpp>
#include <grade/util.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace workbook::grade {

struct GradeOptions {
  fs::path submission;  ///< a folder, an archive (.zip, .tar, .tar.gz, .tgz), or @reference / @stub
  fs::path cache;
  fs::path out;                   ///< where the outputs go (results.json, report.md, ...)
  fs::path work;                  ///< where workspaces are made (removed after)
  std::string id;                 ///< the submission's name in the gradebook
  std::vector<std::string> labs;  ///< numbers; empty: every lab of the cache
  int slot = 0;                   ///< sandbox user slot (batch jobs use 0..N-1)
  int jobs = 2;                   ///< visible tests run in parallel
  bool perf = true;
  bool perf_lock = true;  ///< time kernels only while no other grading job runs (batch)
  std::optional<double> perf_seconds;      ///< overrides the rubric's timing budget
  std::optional<double> perf_full_within;  ///< overrides every perf rule (the self-test's margin)
  std::optional<double> perf_zero_at;
  std::optional<double> test_timeout;  ///< overrides the rubric's per-test timeout
  std::optional<std::uint64_t> seed;   ///< default: a fresh one, recorded
  bool keep_work = false;
  /// What the whole grade may use (its cgroup, as root) and the size of its work folder.
  GradeLimits limits;
  std::string gradescope;    ///< write results.json here too (Gradescope's path)
  std::string prairielearn;  ///< write PrairieLearn's results.json here
};

}  // namespace workbook::grade
