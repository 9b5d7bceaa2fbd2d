#pragma once
/// \file rescore.hpp
/// \brief Scoring a class's records again under a changed rubric, without running anything: what
/// a record keeps (each test's outcome, each perf case's ratio and place on the roofline) is
/// enough for points, weights, visibility, gates and perf tiers. What changes outcomes is not:
/// a test or perf case the record lacks, limits (time, memory, processes, file sizes), the timing
/// budget, the files taken or the symbols allowed. Those are named, and need `batch --regrade`.

#include <grade/prepare.hpp>
#include <grade/result.hpp>
#include <grade/rubric.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace workbook::grade {

/// The rubric's settings that decide outcomes (a re-score cannot follow a change of these), by
/// name: recorded with each graded lab (LabResult::graded_with).
nlohmann::json outcome_settings(const Rubric& rubric);

struct Rescored {
  GradeResult result;
  /// Each change that needs the submission graded again, one sentence each ("lab01: the perf
  /// case relu_large is new"); the score above leaves those out.
  std::vector<std::string> needs_regrade;
};

/// `old` scored again by the rubrics of `cache` (its labs' tests and perf cases as they are now).
/// Items the rubric no longer has are dropped; a lab the cache does not have is kept as it was.
Rescored rescore(const GradeResult& old, const Cache& cache);

}  // namespace workbook::grade
