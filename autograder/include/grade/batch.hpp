#pragma once
/// \file batch.hpp
/// \brief Grading a folder of submissions with N parallel jobs, resumable: each submission's
/// outputs appear atomically (a folder renamed into place when complete), so an interrupted batch
/// re-run grades only what is missing, and no result is lost or counted twice. Then a gradebook
/// CSV and a class summary (score distribution, class roofline scatter per lab).

#include <grade/grade.hpp>
#include <grade/summary.hpp>

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace workbook::grade {

struct BatchOptions {
  fs::path submissions;  ///< a folder: each entry (a folder or an archive) is one submission
  fs::path out;          ///< out/submissions/<id>/, out/gradebook.csv, out/summary.*
  fs::path cache;
  fs::path work;
  int jobs = 1;
  std::vector<std::string> labs;
  bool perf = true;
  bool regrade = false;  ///< grade again even what is complete
  /// Grade again these submissions only (ids), graded or not; the gradebook and summary are
  /// rewritten with every submission's result. Empty: every submission not graded yet.
  std::vector<std::string> only;
  std::vector<std::string> grade_arguments;  ///< passed on to each `workbook-grade grade`
  SummaryOptions summary;                    ///< the summary written at the end
};

/// The submissions of a folder, by id (a submission's name in the gradebook: its file or folder
/// name without an archive extension, only path-safe characters), in order. Throws when the folder
/// does not exist or two entries have the same id.
std::vector<std::pair<std::string, fs::path>> list_submissions(const fs::path& folder);

/// Throws std::invalid_argument naming the first of `ids` (--only) that is not the id of a
/// submission of `all` (those of `folder`), with the ids there are.
void require_known(const std::vector<std::string>& ids,
                   const std::vector<std::pair<std::string, fs::path>>& all,
                   const fs::path& folder);

/// Moves a complete result folder `partial` to `final_dir` in one rename, replacing an older one:
/// the result is there complete, or not at all (a leftover `.old-` folder beside it is removed).
void publish_result(const fs::path& partial, const fs::path& final_dir);

/// Grades what is not graded yet, then writes the gradebook and the summary. Returns 0 when every
/// submission is graded, kExitLabsNotGraded when some labs could not be graded on this machine,
/// and kExitSubmissionsNotGraded when some submissions could not be graded (grader errors, or an
/// interrupted batch; they are retried on the next run).
int batch(const BatchOptions& options, std::ostream& log);

}  // namespace workbook::grade
