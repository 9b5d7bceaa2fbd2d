// Re-scoring a record under a changed rubric, nothing run again: points, gates and perf tiers
// follow the new rubric; a new perf case and a changed time limit are named as needing a re-grade.
#include <grade/rescore.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

using namespace workbook::grade;
using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;

Item item(Source source, const std::string& test, const std::string& function, ItemStatus status) {
  Item i;
  i.lab = "01";
  i.source = source;
  i.test = test;
  i.function = function;
  i.status = status;
  return i;
}

const Item& find(const GradeResult& r, const std::string& test) {
  const auto& items = r.labs.at(0).items;
  const auto it =
      std::find_if(items.begin(), items.end(), [&](const Item& i) { return i.test == test; });
  EXPECT_NE(it, items.end()) << test;
  return *it;
}

struct Fixture {
  fs::path root = fs::temp_directory_path() / ("workbook-rescore-" + std::to_string(getpid()));
  Cache cache;

  Fixture() {
    fs::remove_all(root);
    LabRecipe lab;
    lab.number = "01";
    lab.folder = "01_vectorized_relu";
    lab.generation = root;
    lab.available = true;
    lab.visible_tests = {"Relu.Tail", "Dot.Small"};
    lab.hidden_tests = {"Dot.MatchesOracle"};
    lab.perf_cases = {"relu"};
    cache.root = root;
    cache.labs["01"] = lab;
  }
  ~Fixture() { fs::remove_all(root); }
  void rubric(const json& j) {
    write_json(root / "src/autograder/labs/01_vectorized_relu/rubric.json", j);
  }
};

json rubric_with(double relu_points, double full_within, double zero_at, double timeout) {
  return {{"format", 1},
          {"lab", "01"},
          {"defaults", {{"timeout_seconds", timeout}}},
          {"perf", {{"full_within", full_within}, {"zero_at", zero_at}}},
          {"rules",
           {{{"source", "visible"}, {"match", "Relu.*"}, {"points", relu_points}},
            {{"source", "visible"}, {"match", "Dot.*"}, {"points", 1}},
            {{"source", "hidden"}, {"match", "Dot.*"}, {"points", 2}, {"gate", true}},
            {{"source", "perf"}, {"match", "*"}, {"points", 4}}}}};
}

TEST(Rescore, PointsGatesAndPerfTiersFollowTheNewRubricAndNewCasesNeedARegrade) {
  Fixture f;
  f.rubric(rubric_with(1, 2.0, 4.0, 60));
  // A record as grading leaves it: dot's visible test passed in the student's process while its
  // gating hidden test failed; relu timed at 1.5x the reference.
  GradeResult old;
  old.id = "ana";
  LabResult lab;
  lab.number = "01";
  lab.folder = "01_vectorized_relu";
  Item build = item(Source::visible, "build", "", ItemStatus::passed);
  Item perf = item(Source::perf, "relu", "relu", ItemStatus::passed);
  perf.details = {{"ratio", 1.5}, {"fraction_of_roof", 0.4}};
  lab.items = {build, item(Source::visible, "Relu.Tail", "relu", ItemStatus::passed),
               item(Source::visible, "Dot.Small", "dot", ItemStatus::passed),
               item(Source::hidden, "Dot.MatchesOracle", "dot", ItemStatus::failed), perf};
  old.labs = {lab};
  const Rubric first = f.cache.rubric(f.cache.labs["01"]);
  old.labs[0].graded_with = outcome_settings(first);

  const Rescored same = rescore(old, f.cache);
  EXPECT_TRUE(same.needs_regrade.empty());
  EXPECT_DOUBLE_EQ(same.result.score, 1 + 4) << "Relu.Tail, and relu's perf in full";
  EXPECT_DOUBLE_EQ(same.result.max_score, 1 + 1 + 2 + 4);
  EXPECT_TRUE(find(same.result, "Dot.Small").details.value("gated", false))
      << "the gate holds dot's visible pass back";

  // Relu.Tail worth 3, perf full within 1.2x and none from 2x (1.5x: 5/8 of 4), a new perf case,
  // and a shorter time limit.
  f.rubric(rubric_with(3, 1.2, 2.0, 30));
  f.cache.labs["01"].perf_cases = {"relu", "dot"};
  const Rescored now = rescore(same.result, f.cache);
  EXPECT_DOUBLE_EQ(find(now.result, "Relu.Tail").score, 3);
  EXPECT_NEAR(find(now.result, "relu").score, 4 * (2.0 - 1.5) / (2.0 - 1.2), 1e-9);
  EXPECT_THAT(find(now.result, "relu").output, HasSubstr("Re-scored from the recorded time"));
  EXPECT_TRUE(find(now.result, "Dot.Small").details.value("gated", false));
  EXPECT_NEAR(now.result.score, 3 + 2.5, 1e-9);
  EXPECT_THAT(now.needs_regrade,
              Contains(HasSubstr("lab01 perf dot is new in the lab, not run for this submission")));
  EXPECT_THAT(now.needs_regrade,
              Contains(HasSubstr("the rubric's test_timeout_seconds changed (60.0 to 30.0)")));
  EXPECT_DOUBLE_EQ(find(now.result, "dot").max_score, 0) << "left out until it is graded";

  // The gate lifted: dot's visible pass counts again, recovered from the record.
  json open = rubric_with(3, 1.2, 2.0, 30);
  open["rules"][2]["gate"] = false;
  f.rubric(open);
  const Rescored lifted = rescore(now.result, f.cache);
  EXPECT_EQ(find(lifted.result, "Dot.Small").status, ItemStatus::passed);
  EXPECT_DOUBLE_EQ(find(lifted.result, "Dot.Small").score, 1);
}

}  // namespace
