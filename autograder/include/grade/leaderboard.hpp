#pragma once
/// \file leaderboard.hpp
/// \brief The class leaderboard of a lab: opt-in (a leaderboard_name in the student's
/// leaderboard.txt), one board per machine kind (CPU model, or GPU), ranked by the lab's time over
/// the reference's (the geometric mean over its perf cases) with the spread of the interleaved
/// rounds. And the same figures as Gradescope's `leaderboard` field, where Gradescope itself asks
/// each student for a pseudonym.

#include <grade/result.hpp>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace workbook::grade {

/// Gradescope's results.json `leaderboard`: [{name, value, order: "asc"}], one entry per perf
/// case timed and credited, and one per lab (the geometric mean). Empty when nothing was timed.
nlohmann::json gradescope_leaderboard(const GradeResult& result);

struct LeaderboardEntry {
  std::string name;          ///< the student's leaderboard_name
  std::string id;            ///< for the instructor's CSV only
  double ratio = 0;          ///< time / reference's, geometric mean over the lab's perf cases
  double low = 0, high = 0;  ///< the same over the rounds' first and third quartiles (0: unknown)
  std::vector<std::pair<std::string, double>> cases;  ///< perf case -> ratio
};

struct LabLeaderboard {
  std::string lab;
  std::map<std::string, std::vector<LeaderboardEntry>> boards;  ///< machine kind -> ranked
  std::size_t opted_in = 0;   ///< submissions with a leaderboard_name
  std::size_t not_timed = 0;  ///< of those, without a credited time for every perf case
};

LabLeaderboard lab_leaderboard(const std::string& lab, const std::vector<GradeResult>& results);
/// machine, rank, name, ratio, low, high, then one column per perf case; and the id.
std::string leaderboard_csv(const LabLeaderboard& board);
/// A static page: one table per machine kind. Names only, no ids.
std::string leaderboard_html(const LabLeaderboard& board);

}  // namespace workbook::grade
