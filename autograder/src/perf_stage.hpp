#pragma once
// Perf: each perf case timed by the harness's driver, the student's worker and the reference's each
// in the sandbox, and scored by the rubric's perf scale. Private to the grader.
#include <grade/prepare.hpp>
#include <grade/result.hpp>
#include <grade/rubric.hpp>

#include "workspace.hpp"

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace workbook::grade {

/// Times the lab's perf cases and scores them; a function in `gated_off` is not timed (it is not
/// right yet). Its roofline plots go into `result.plots`, driver errors into `result.notes`.
void run_perf(Context& c, const LabRecipe& lab, const Rubric& rubric, std::vector<Item>& items,
              LabResult& result, const std::set<std::string>& gated_off,
              Clock::time_point lab_start);

}  // namespace workbook::grade
