// Re-scoring a record (see rescore.hpp): the items are made again from the rubric of the day,
// their recorded outcomes put back as they came from the run (before any gate), and the gates,
// perf tiers and totals applied again by the same code that grading uses (score_stage).
#include <grade/rescore.hpp>

#include "score_stage.hpp"

#include <workbook/format.hpp>

#include <map>
#include <set>

namespace workbook::grade {

using nlohmann::json;

json outcome_settings(const Rubric& r) {
  json perf_budgets = json::object();
  for (const Rule& rule : r.rules)
    if (rule.perf) perf_budgets[rule.match] = rule.perf->max_seconds;
  return {{"test_timeout_seconds", r.test_timeout_seconds},
          {"compile_seconds", r.compile_seconds},
          {"lab_seconds", r.lab_seconds},
          {"memory_bytes", r.memory_bytes},
          {"processes", r.processes},
          {"file_bytes", r.file_bytes},
          {"max_source_bytes", r.max_source_bytes},
          {"perf_max_seconds", r.perf.max_seconds},
          {"perf_rule_max_seconds", perf_budgets},
          {"extra_files", r.extra_files},
          {"optional_files", r.optional_files},
          {"allowed_symbols", r.allowed_symbols},
          {"skip_reasons", r.skip_reasons}};
}

namespace {

// What a gate wrote over a passing test, taken back: the outcome as the run gave it.
void ungate(Item& i) {
  for (const char* key : {"gated", "not_implemented", "forfeited"})
    if (i.details.value(key, false)) {
      i.status = ItemStatus::passed;
      i.output.clear();  // a passed test's output is not shown; the gate writes its own again
    }
  for (const char* key : {"gated", "not_implemented", "forfeited", "excluded"})
    i.details.erase(key);
  // The gates' flags on visible tests are set again by apply_gates; the perf driver's stay.
  if (i.source == Source::visible) i.details.erase("flag");
}

void rescore_perf(Item& i, const Rubric& rubric) {
  if (!i.details.contains("ratio") || i.status == ItemStatus::skipped) {
    if (i.status != ItemStatus::passed) i.score = 0;
    return;
  }
  const Rule* rule = rubric.find(Source::perf, i.test);
  const PerfScale scale = rule && rule->perf ? *rule->perf : rubric.perf;
  const double ratio = i.details.value("ratio", 0.0);
  const bool implausible = ratio < scale.implausible_ratio &&
                           i.details.value("fraction_of_roof", 0.0) > scale.implausible_roof;
  // A timed output that differed is no time at all, whatever the tiers.
  if (i.details.value("timed_output_differs", false)) {
    i.score = 0;
    return;
  }
  i.score = implausible ? 0 : i.max_score * scale.fraction(ratio);
  i.status = i.score >= i.max_score - 1e-9 ? ItemStatus::passed : ItemStatus::failed;
  i.details["implausible"] = implausible;
  i.details["full_within"] = scale.full_within;
  i.details["zero_at"] = scale.zero_at;
  if (implausible) i.details["flag"] = "implausibly fast";
  // The grading's own text follows a re-score's line; an earlier re-score's line goes.
  if (i.output.rfind("Re-scored from", 0) == 0 && i.output.find("\n\n") != std::string::npos)
    i.output = i.output.substr(i.output.find("\n\n") + 2);
  i.output = "Re-scored from the recorded time: " + workbook::format_fixed(ratio, 2) +
             "x the reference's, " + workbook::format_fixed(i.score, 2) + " of " +
             workbook::format_fixed(i.max_score, 2) + " points (full within " +
             workbook::format_fixed(scale.full_within, 2) + "x, none from " +
             workbook::format_fixed(scale.zero_at, 2) + "x).\n\n" + i.output;
}

LabResult rescore_lab(const LabResult& old, const LabRecipe& lab, const Rubric& rubric,
                      std::vector<std::string>& needs_regrade) {
  const std::string name = lab.name();
  if (!old.graded_with.is_null() && old.graded_with != outcome_settings(rubric)) {
    const json now = outcome_settings(rubric);
    for (const auto& [key, value] : now.items())
      if (!old.graded_with.contains(key) || old.graded_with[key] != value)
        needs_regrade.push_back(
            name + ": the rubric's " + key + " changed (" +
            (old.graded_with.contains(key) ? old.graded_with[key].dump() : std::string("unset")) +
            " to " + value.dump() + "): outcomes may differ");
  }
  LabResult r;
  r.number = old.number;
  r.folder = old.folder;
  r.title = rubric.title;
  r.status = old.status;
  r.build_output = old.build_output;
  r.seconds = old.seconds;
  r.plots = old.plots;
  r.graded_with = old.graded_with;
  for (const std::string& n : old.notes)
    if (n.rfind("nothing of lab ", 0) != 0) r.notes.push_back(n);  // total_lab says it again
  std::map<std::pair<Source, std::string>, const Item*> recorded;
  Item build;
  for (const Item& i : old.items) {
    if (i.test == "build" && i.function.empty())
      build = i;
    else
      recorded[{i.source, i.test}] = &i;
  }
  const bool ran = old.status == LabStatus::graded || old.status == LabStatus::not_graded;
  std::vector<Item> items;
  std::set<std::string> not_timed_before;
  for (const Item& fresh : all_items(lab, rubric)) {
    const auto it = recorded.find({fresh.source, fresh.test});
    Item i = fresh;
    if (it == recorded.end()) {
      // Never run for this submission: it cannot be scored from the record.
      if (ran)
        needs_regrade.push_back(name + ": " + fresh.name() +
                                " is new in the lab, not run for this submission");
      i.status = ItemStatus::skipped;
      i.details["grader"] = true;
      i.output = "Not graded: added to the lab after this submission was graded.";
      items.push_back(i);
      continue;
    }
    const Item& was = *it->second;
    i.status = was.status;
    i.output = was.output;
    i.details = was.details;
    i.seconds = was.seconds;
    i.score = was.score;
    ungate(i);
    if (i.source == Source::perf && i.status == ItemStatus::failed &&
        !i.details.contains("ratio") && i.output.rfind("Not timed: ", 0) == 0)
      not_timed_before.insert(i.function);
    items.push_back(i);
  }
  if (old.status == LabStatus::graded) {
    const Gates gates = apply_gates(items);
    for (const std::string& f : not_timed_before)
      if (!gates.not_timed.count(f))
        needs_regrade.push_back(name + ": " + f +
                                " was not timed (a gate held it back) and now would be");
    for (Item& i : items) {
      if (i.source != Source::perf) continue;
      if (gates.not_timed.count(i.function) && i.details.contains("ratio")) {
        i.status = ItemStatus::failed;
        i.score = 0;
        i.output = "Not credited: " + i.function +
                   " is not implemented yet, or its hidden tests fail (see them above).";
      } else {
        rescore_perf(i, rubric);
      }
    }
  }
  total_lab(r, std::move(items), build, lab, rubric);
  return r;
}

}  // namespace

Rescored rescore(const GradeResult& old, const Cache& cache) {
  Rescored out;
  out.result = old;
  out.result.labs.clear();
  out.result.score = 0;
  out.result.max_score = 0;
  for (const LabResult& l : old.labs) {
    const auto it = cache.labs.find(l.number);
    LabResult now = l;
    if (it != cache.labs.end() && it->second.available)
      now = rescore_lab(l, it->second, cache.rubric(it->second), out.needs_regrade);
    out.result.score += now.score;
    out.result.max_score += now.max_score;
    out.result.labs.push_back(std::move(now));
  }
  return out;
}

}  // namespace workbook::grade
