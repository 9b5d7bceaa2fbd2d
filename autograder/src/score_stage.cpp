// Score (see score_stage.hpp).
#include "score_stage.hpp"

#include <map>

namespace workbook::grade {

Item make_item(const LabRecipe& lab, const Rubric& rubric, Source source, const std::string& test) {
  Item item;
  item.lab = lab.number;
  item.source = source;
  item.test = test;
  const Rule* rule = rubric.find(source, test);
  item.function = Rubric::function_of(rule, source, test);
  item.max_score = rule ? rule->points : 0;
  item.visibility = rule ? rule->visibility : rubric.visibility;
  item.gate = rule && rule->gate;
  item.forfeit = rule && rule->forfeit;
  item.status = ItemStatus::not_run;
  if (!rule) item.details["rubric"] = "no rule: 0 of 0";
  return item;
}

std::vector<Item> all_items(const LabRecipe& lab, const Rubric& rubric) {
  std::vector<Item> items;
  for (const std::string& t : lab.visible_tests)
    items.push_back(make_item(lab, rubric, Source::visible, t));
  for (const std::string& t : lab.hidden_tests)
    items.push_back(make_item(lab, rubric, Source::hidden, t));
  for (const std::string& t : lab.perf_cases)
    items.push_back(make_item(lab, rubric, Source::perf, t));
  return items;
}

void fail_all(std::vector<Item>& items, const std::string& why) {
  for (Item& i : items) {
    if (i.status != ItemStatus::not_run) continue;
    i.status = ItemStatus::failed;
    i.score = 0;
    i.output = why;
  }
}

Gates apply_gates(std::vector<Item>& items) {
  // A function earns nothing from tests it passes by accident: when it is not implemented (some
  // of its tests fail with "not implemented": the stub's argument checks pass the others); and
  // its visible tests earn nothing when its gating hidden tests fail (they guard the tests that
  // run inside the student's process, whose results the student's code could forge).
  std::set<std::string> unimplemented, visible_failed, gated_off;
  std::map<std::string, std::string> forfeited;  // function -> the integrity check it failed
  std::set<std::string>
      hidden_failed;  // functions failing a gating hidden test that is not an integrity check
  std::set<std::string> hidden_ran_failed;  // ... that ran (not one cut off by the lab's budget)
  for (const Item& i : items) {
    if (i.status != ItemStatus::failed) continue;
    if (i.source == Source::hidden && i.gate && !i.details.value("not_run", false))
      hidden_ran_failed.insert(i.function);
    if (i.output.find("not implemented yet: implement ") != std::string::npos)
      unimplemented.insert(i.function);
    if (i.source == Source::visible) visible_failed.insert(i.function);
    if (i.gate) gated_off.insert(i.function);
    if (i.forfeit && !forfeited.count(i.function)) forfeited[i.function] = i.test;
    if (i.source == Source::hidden && i.gate && !i.forfeit) hidden_failed.insert(i.function);
  }
  // For the instructor: every visible test of a function passed in the student's process, while
  // the same function fails its gating hidden tests or says "not implemented" only in the sealed
  // worker. That is what a forged channel or results faked inside the test look like (or a bug only
  // the hidden inputs reach); a function that is merely wrong fails some visible test too, and is
  // not flagged. The student's message stays neutral.
  const std::string suspect =
      "visible tests passed but the sealed tests of the same function failed (a forged "
      "channel, or results faked in the test process)";
  auto flag_suspect = [&](Item& i) {
    // Hidden tests that never ran (the lab's time budget ran out before them) are no evidence.
    if (!unimplemented.count(i.function) && !hidden_ran_failed.count(i.function)) return;
    if (i.source == Source::visible && !visible_failed.count(i.function))
      i.details["flag"] = suspect;
  };
  for (Item& i : items) {
    if (i.status != ItemStatus::passed || i.gate) continue;
    if (unimplemented.count(i.function)) {
      i.status = ItemStatus::failed;
      i.details["not_implemented"] = true;
      flag_suspect(i);
      i.output = "Passed, but not credited: " + i.function +
                 " is not implemented yet (its other tests say so); "
                 "this test passes on the stub's argument checks alone.";
    } else if (gated_off.count(i.function) && i.source == Source::visible) {
      // Hidden tests are checked outside the student's process: each counts on its own merit.
      i.status = ItemStatus::failed;
      i.details["gated"] = true;
      flag_suspect(i);
      i.output = "Passed in your program, but not credited: hidden tests of " + i.function +
                 " fail, and they guard "
                 "the points of the tests that run inside your program.";
    }
  }
  // A function that passes its other gating hidden tests (it computes the right thing) but keeps
  // results from one call to the next, or writes inputs it must leave alone, earns nothing (its
  // other hidden tests included): its right answers cannot be told from reused ones. (A function
  // that is simply wrong fails those tests too; it is gated as usual, not treated as this.)
  for (Item& i : items) {
    const auto f = forfeited.find(i.function);
    if (f == forfeited.end() || i.source == Source::perf || unimplemented.count(i.function) ||
        hidden_failed.count(i.function))
      continue;
    if (i.source == Source::visible)  // the flags list reads them from the visible tests
      i.details["flag"] = "failed an integrity check (" + f->second +
                          "): results kept between calls, or inputs modified";
    if (i.status != ItemStatus::passed) continue;
    i.status = ItemStatus::failed;
    i.details["forfeited"] = true;
    i.output = "Passed, but not credited: " + i.function + " failed the hidden test " + f->second +
               " (its results must be fresh at each call and its inputs left as they were); a "
               "function that fails it "
               "earns nothing, since its right answers cannot be told from reused ones.";
  }
  gated_off.insert(unimplemented.begin(), unimplemented.end());
  return {std::move(gated_off)};
}

void total_lab(LabResult& result, std::vector<Item> items, const Item& build, const LabRecipe& lab,
               const Rubric& rubric) {
  for (Item& i : items) {
    // Excluded: skipped here (the rubric's policy), or not the student's doing (no perf run, a
    // grader error); those always leave the maximum.
    if (i.status == ItemStatus::skipped &&
        (rubric.skipped == SkipPolicy::exclude || i.details.value("grader", false))) {
      i.details["excluded"] = true;
      i.max_score = 0;
    } else if (i.status == ItemStatus::skipped) {
      i.status = ItemStatus::failed;
      i.output =
          "Counted as 0 (the rubric counts a test that cannot run here as zero). " + i.output;
    }
    if (i.status != ItemStatus::passed && i.source != Source::perf) i.score = 0;
    if (i.status == ItemStatus::passed && i.source != Source::perf) i.score = i.max_score;
  }
  items.insert(items.begin(), build);
  result.items = std::move(items);
  std::string skipped_because;
  for (const Item& i : result.items) {
    result.score += i.score;
    result.max_score += i.max_score;
    if (skipped_because.empty() && i.status == ItemStatus::skipped && i.test != "build")
      skipped_because = i.output;
  }
  if (result.status == LabStatus::graded && result.max_score == 0) {
    // Nothing could be graded (a GPU lab on a machine without a GPU): never a 0 / 0 "success".
    result.status = LabStatus::not_graded;
    result.notes.push_back(
        "nothing of lab " + lab.number + " could be graded on this machine: " +
        (skipped_because.empty() ? std::string("no test counts") : skipped_because));
  }
}

}  // namespace workbook::grade
