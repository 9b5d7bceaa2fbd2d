#pragma once
/// \file summary.hpp
/// \brief The class summary of a batch, from its records alone (nothing is graded or run again):
/// gradebook.csv, summary.{md,html} with the score distribution and the class on the roofline per
/// lab, what the grading flagged, the anomalies worth a look, the similar submissions per lab
/// (sim_c++, the handout subtracted) with a side-by-side page per pair, and the opt-in
/// leaderboards. With `rescore`, every record is first scored again under the rubrics of the day
/// (rescore.hpp).

#include <grade/util.hpp>

#include <iosfwd>

namespace workbook::grade {

struct SummaryOptions {
  /// The instructor's tree: each lab's handout (labs/<folder>/, subtracted from the similarity)
  /// and its reference (solutions/<folder>/, its size for the anomalies). Empty: those parts say
  /// so.
  fs::path trusted;
  /// The prepared cache: its rubrics, for `rescore` only.
  fs::path cache;
  bool rescore = false;              ///< score every record again under the cache's rubrics
  double similarity_threshold = 60;  ///< % of a submission's own code found in another
  bool similarity = true;
};

/// Rewrites out/gradebook.csv, out/summary.{md,html} and out/summary/ (plots, similarity pages,
/// leaderboards) from out/submissions/<id>/record.json (and the sources kept beside each). With
/// `rescore`, each submission's outputs are rewritten with its new score first. Throws
/// std::runtime_error when `rescore` is asked and the cache cannot be read.
void write_summary(const fs::path& out, const SummaryOptions& options, std::ostream& log);

}  // namespace workbook::grade
