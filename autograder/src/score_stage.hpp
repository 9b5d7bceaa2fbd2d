#pragma once
// Score: a lab's items made from its rubric, the gates between them (a function earns nothing from
// tests it passes by accident or by forging), and the lab's totals. Private to the grader.
#include <grade/prepare.hpp>
#include <grade/result.hpp>
#include <grade/rubric.hpp>

#include <set>
#include <string>
#include <vector>

namespace workbook::grade {

/// One test's item, as the rubric scores it, not run yet.
Item make_item(const LabRecipe& lab, const Rubric& rubric, Source source, const std::string& test);
/// Every item of a lab: its visible tests, hidden tests and perf cases.
std::vector<Item> all_items(const LabRecipe& lab, const Rubric& rubric);
/// Fails every item not run yet, saying why.
void fail_all(std::vector<Item>& items, const std::string& why);

/// What the gates decided, for the perf stage.
struct Gates {
  std::set<std::string>
      not_timed;  ///< functions not implemented, or failing a gating test: not timed
};

/// Applies the gates to a lab's tested items (before perf): an unimplemented function's passes, a
/// function's visible passes when its gating hidden tests fail, and everything of a function that
/// fails an integrity check (forfeit) earn nothing.
Gates apply_gates(std::vector<Item>& items);

/// The lab's totals: skipped items excluded or counted as zero by the rubric's policy, the scores
/// of the tests, the build item first, and a lab where nothing could be graded marked so.
void total_lab(LabResult& result, std::vector<Item> items, const Item& build, const LabRecipe& lab,
               const Rubric& rubric);

}  // namespace workbook::grade
