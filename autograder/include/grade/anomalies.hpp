#pragma once
/// \file anomalies.hpp
/// \brief What in a graded class is worth a look, each with its evidence: visible tests passed
/// while the sealed tests failed, a kernel near or past the measured roofline, a time that moved
/// by more than its interval between the first measurement and the re-measurement, and a kernel
/// much faster than the reference from a much shorter source. Nothing here changes a score.

#include <grade/result.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace workbook::grade {

struct Anomaly {
  std::string id, lab;
  std::string kind;      ///< a short name, the same for every anomaly of its kind
  std::string evidence;  ///< what was measured, in a sentence
};

/// `reference_bytes`: the reference's source size per lab (its student files), for the "much
/// shorter" test; a lab missing from it is not tested for that.
std::vector<Anomaly> find_anomalies(const std::vector<GradeResult>& results,
                                    const std::map<std::string, std::uint64_t>& reference_bytes);

}  // namespace workbook::grade
