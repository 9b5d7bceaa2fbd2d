// The class leaderboard (see leaderboard.hpp). A time counts only when it was credited: not
// flagged implausible, not a timed output that differed, and with a ratio the grader's clock
// measured.
#include <grade/leaderboard.hpp>

#include <grade/report.hpp>
#include <grade/util.hpp>

#include <workbook/format.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace workbook::grade {
namespace {

using nlohmann::json;

bool counts(const Item& i) {
  return i.source == Source::perf && i.details.contains("ratio") &&
         i.details.value("ratio", 0.0) > 0 && !i.details.value("implausible", false) &&
         !i.details.value("timed_output_differs", false) && !i.details.value("gated", false) &&
         i.status != ItemStatus::skipped;
}

std::string machine_of(const GradeResult& r, const LabResult& l) {
  for (const Item& i : l.items)
    if (counts(i) && !i.details.value("machine", std::string()).empty())
      return i.details.value("machine", std::string());
  if (r.ceilings.is_object() && r.ceilings.contains("machine"))
    return r.ceilings["machine"].value("cpu_model", "unknown machine");
  return "unknown machine";
}

std::string ratio_text(double v) {
  return workbook::format_fixed(v, 3);
}

}  // namespace

json gradescope_leaderboard(const GradeResult& r) {
  json entries = json::array();
  for (const LabResult& l : r.labs) {
    double log_sum = 0;
    int count = 0, cases = 0;
    for (const Item& i : l.items) {
      if (i.source != Source::perf) continue;
      ++cases;
      if (!counts(i)) continue;
      const double ratio = i.details.value("ratio", 0.0);
      entries.push_back({{"name", "lab" + l.number + " " + i.test + " (time / reference)"},
                         {"value", std::round(ratio * 1000) / 1000},
                         {"order", "asc"}});
      log_sum += std::log(ratio);
      ++count;
    }
    if (count > 1 && count == cases)
      entries.push_back({{"name", "lab" + l.number + " (time / reference, geometric mean)"},
                         {"value", std::round(std::exp(log_sum / count) * 1000) / 1000},
                         {"order", "asc"}});
  }
  return entries;
}

LabLeaderboard lab_leaderboard(const std::string& lab, const std::vector<GradeResult>& results) {
  LabLeaderboard board;
  board.lab = lab;
  for (const GradeResult& r : results) {
    if (r.leaderboard_name.empty()) continue;
    for (const LabResult& l : r.labs) {
      if (l.number != lab) continue;
      ++board.opted_in;
      LeaderboardEntry e;
      e.name = r.leaderboard_name;
      e.id = r.id;
      double log_ratio = 0, log_low = 0, log_high = 0;
      bool complete = l.status == LabStatus::graded, interval = true;
      int cases = 0;
      for (const Item& i : l.items) {
        if (i.source != Source::perf) continue;
        ++cases;
        if (!counts(i)) {
          complete = false;
          continue;
        }
        const double ratio = i.details.value("ratio", 0.0);
        e.cases.emplace_back(i.test, ratio);
        log_ratio += std::log(ratio);
        // The rounds' spread, relative to their median, around the graded ratio (the grader's
        // clock over the whole comparison, which the rounds' median need not equal).
        const double q1 = i.details.value("ratio_q1", 0.0), q3 = i.details.value("ratio_q3", 0.0);
        const double median = i.details.value("ratio_median", 0.0);
        if (q1 > 0 && q3 > 0 && median > 0) {
          log_low += std::log(ratio * q1 / median);
          log_high += std::log(ratio * q3 / median);
        } else {
          interval = false;
        }
      }
      if (!complete || cases == 0) {
        ++board.not_timed;
        continue;
      }
      e.ratio = std::exp(log_ratio / cases);
      if (interval) {
        e.low = std::exp(log_low / cases);
        e.high = std::exp(log_high / cases);
      }
      board.boards[machine_of(r, l)].push_back(e);
    }
  }
  for (auto& [machine, entries] : board.boards)
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.ratio != b.ratio ? a.ratio < b.ratio : a.name < b.name;
    });
  return board;
}

std::string leaderboard_csv(const LabLeaderboard& board) {
  std::set<std::string> case_names;
  for (const auto& [machine, entries] : board.boards)
    for (const LeaderboardEntry& e : entries)
      for (const auto& [name, ratio] : e.cases) case_names.insert(name);
  std::vector<std::string> header = {"machine", "rank", "name", "ratio", "low", "high"};
  header.insert(header.end(), case_names.begin(), case_names.end());
  header.push_back("id");
  std::string csv = csv_line(header);
  for (const auto& [machine, entries] : board.boards)
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const LeaderboardEntry& e = entries[k];
      std::vector<std::string> row = {machine,
                                      std::to_string(k + 1),
                                      e.name,
                                      ratio_text(e.ratio),
                                      e.low > 0 ? ratio_text(e.low) : "",
                                      e.high > 0 ? ratio_text(e.high) : ""};
      for (const std::string& c : case_names) {
        std::string cell;
        for (const auto& [name, ratio] : e.cases)
          if (name == c) cell = ratio_text(ratio);
        row.push_back(cell);
      }
      row.push_back(e.id);
      csv += csv_line(row);
    }
  return csv;
}

std::string leaderboard_html(const LabLeaderboard& board) {
  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Lab " + html_escape(board.lab) +
      " leaderboard</title><style>body{font-family:Helvetica,Arial,sans-serif;margin:1em}"
      "table{border-collapse:collapse;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:3px "
      "10px;text-align:right}td.n,th.n{text-align:left}</style></head><body><h1>Lab " +
      html_escape(board.lab) +
      " leaderboard</h1><p>Time over the reference's on the same machine (geometric mean over the "
      "lab's perf cases; lower is faster, below 1 beats the reference), with the spread of the "
      "interleaved rounds (their first to third quartile). Only students who asked to be listed "
      "(a <code>leaderboard_name</code> in leaderboard.txt), by the name they chose; one table "
      "per machine kind, since times on different machines do not compare.</p>";
  if (board.boards.empty()) html += "<p>No one on the board yet.</p>";
  for (const auto& [machine, entries] : board.boards) {
    html += "<h2>" + html_escape(machine) +
            "</h2><table><tr><th>rank</th><th class=\"n\">name</th><th>time / reference</th>"
            "<th>interval</th>";
    for (const auto& [name, ratio] : entries.front().cases)
      html += "<th>" + html_escape(name) + "</th>";
    html += "</tr>";
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const LeaderboardEntry& e = entries[k];
      html += "<tr><td>" + std::to_string(k + 1) + "</td><td class=\"n\">" + html_escape(e.name) +
              "</td><td>" + ratio_text(e.ratio) + "x</td><td>" +
              (e.low > 0 ? ratio_text(e.low) + " to " + ratio_text(e.high) : std::string("-")) +
              "</td>";
      for (const auto& [name, ratio] : e.cases) html += "<td>" + ratio_text(ratio) + "x</td>";
      html += "</tr>";
    }
    html += "</table>";
  }
  return html + "</body></html>\n";
}

}  // namespace workbook::grade
