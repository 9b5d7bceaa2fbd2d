// The class summary's leaderboard and anomalies, on records made by hand: who is ranked where and
// on which machine's board, and which measurements raise an anomaly with what evidence.
#include <grade/anomalies.hpp>
#include <grade/leaderboard.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace {

using namespace workbook::grade;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

Item perf(const std::string& test, double ratio, const json& more = json::object()) {
  Item i;
  i.lab = "01";
  i.source = Source::perf;
  i.test = test;
  i.function = test;
  i.max_score = 2;
  i.score = 2;
  i.status = ItemStatus::passed;
  i.details = {{"ratio", ratio},          {"ratio_median", ratio},   {"ratio_q1", 0.9 * ratio},
               {"ratio_q3", 1.1 * ratio}, {"fraction_of_roof", 0.5}, {"machine", "AMD EPYC"}};
  i.details.update(more);
  return i;
}

GradeResult student(const std::string& id, const std::string& name, std::vector<Item> items,
                    std::uint64_t bytes = 3000) {
  GradeResult r;
  r.id = id;
  r.leaderboard_name = name;
  r.files = {{"labs/01_vectorized_relu/vector_ops.cpp", bytes, ""}};
  LabResult l;
  l.number = "01";
  l.folder = "01_vectorized_relu";
  l.items = std::move(items);
  r.labs = {l};
  return r;
}

TEST(Leaderboard, RanksTheStudentsWhoOptedInPerMachineByTheGeometricMeanOfTheirRatios) {
  const std::vector<GradeResult> class_ = {
      student("s1", "Slow Sam", {perf("relu", 2.0), perf("dot", 2.0)}),
      student("s2", "Quick Quinn", {perf("relu", 0.5), perf("dot", 2.0)}),
      student("s3", "", {perf("relu", 0.1), perf("dot", 0.1)}),  // did not opt in
      student("s4", "On a Xeon",
              {perf("relu", 1.0, {{"machine", "Intel Xeon"}}),
               perf("dot", 1.0, {{"machine", "Intel Xeon"}})}),
      student("s5", "Flagged Flo", {perf("relu", 0.2, {{"implausible", true}}), perf("dot", 1.0)}),
  };
  const LabLeaderboard board = lab_leaderboard("01", class_);
  EXPECT_EQ(board.opted_in, 4u);
  EXPECT_EQ(board.not_timed, 1u) << "an implausible time is not credited: not on the board";
  ASSERT_EQ(board.boards.size(), 2u);
  const auto& epyc = board.boards.at("AMD EPYC");
  ASSERT_EQ(epyc.size(), 2u);
  EXPECT_EQ(epyc[0].name, "Quick Quinn");
  EXPECT_DOUBLE_EQ(epyc[0].ratio, 1.0) << "the geometric mean of 0.5 and 2";
  EXPECT_NEAR(epyc[0].low, 0.9, 1e-9);
  EXPECT_NEAR(epyc[0].high, 1.1, 1e-9);
  EXPECT_EQ(epyc[1].name, "Slow Sam");
  EXPECT_EQ(board.boards.at("Intel Xeon").at(0).name, "On a Xeon");
  const std::string html = leaderboard_html(board);
  EXPECT_THAT(html, HasSubstr("<td class=\"n\">Quick Quinn</td><td>1.000x</td><td>0.900 to 1.100"));
  EXPECT_THAT(html, Not(HasSubstr("s2"))) << "the page names students by their chosen name only";
  EXPECT_THAT(leaderboard_csv(board),
              HasSubstr("AMD EPYC,1,Quick Quinn,1.000,0.900,1.100,2.000,0.500,s2\n"));
}

TEST(Anomalies, EachComesWithTheMeasurementItWasRaisedOn) {
  Item visible;
  visible.lab = "01";
  visible.source = Source::visible;
  visible.test = "Dot.Small";
  visible.function = "dot";
  visible.details["flag"] = "visible tests passed but the sealed tests of the same function failed";
  Item hidden;
  hidden.lab = "01";
  hidden.source = Source::hidden;
  hidden.test = "Dot.MatchesOracle";
  hidden.function = "dot";
  hidden.status = ItemStatus::failed;
  const std::vector<GradeResult> class_ = {
      student("forger", "", {visible, hidden}),
      student("roof", "", {perf("relu", 1.0, {{"fraction_of_roof", 0.97}})}),
      student("noisy", "", {perf("relu", 1.0, {{"first_attempt_ratio", 1.8}})}),
      student("short", "", {perf("relu", 0.5)}, 1000),
      student("plain", "", {perf("relu", 1.0, {{"first_attempt_ratio", 1.05}})}),
  };
  const std::vector<Anomaly> found = find_anomalies(class_, {{"01", 4000}});
  std::vector<std::string> lines;
  for (const Anomaly& a : found) lines.push_back(a.id + ": " + a.kind + ": " + a.evidence);
  EXPECT_THAT(lines, ::testing::UnorderedElementsAre(
                         "forger: visible passed, sealed failed: dot: every visible test passed; "
                         "the sealed tests Dot.MatchesOracle failed",
                         "roof: near or past the roofline: relu reached 97% of the roofline this "
                         "machine allows, at 1.00x the reference's time",
                         "noisy: changed on re-measurement: relu measured 1.80x first and 1.00x "
                         "when measured again (the rounds' interval 0.90x to 1.10x)",
                         "short: much faster from much shorter code: relu at 0.50x the "
                         "reference's time from 1000 bytes of source (the reference's: 4000)"));
}

}  // namespace
