// Similarity (see similarity.hpp). Three runs of sim_c++ per lab:
//   1. every submission against the handout only (-S, the handout an "old" file): the lines of each
//      run a submission shares with the stub are blanked in its copy (line numbers kept), so what
//      every student got counts for no one;
//   2. the blanked copies, each pair in isolation, both ways (-p -e -a: sim's exact percentages,
//      "F consists for x % of G material");
//   3. each pair above the threshold alone (-n -s), for the runs its side-by-side view shows.
// sim reads student text as data (a lexer over it), outside the sandbox, like any diff tool.
#include <grade/similarity.hpp>

#include <workbook/format.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace workbook::grade {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// One line of sim's -n output: "s3.cpp: line 23-60   |handout.cpp: line 29-66   [330]".
struct RawRun {
  std::string a, b;
  MatchRun lines;
};
std::vector<RawRun> parse_runs(const std::string& text) {
  static const std::regex line(
      R"(^(\S+): line (\d+)(?:-(\d+))?\s*\|(\S+): line (\d+)(?:-(\d+))?\s*\[(\d+)\])");
  std::vector<RawRun> runs;
  for (const std::string& l : lines_of(text)) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    RawRun r;
    r.a = m[1];
    r.b = m[4];
    r.lines.a_first = std::stoi(m[2]);
    r.lines.a_last = m[3].matched ? std::stoi(m[3]) : r.lines.a_first;
    r.lines.b_first = std::stoi(m[5]);
    r.lines.b_last = m[6].matched ? std::stoi(m[6]) : r.lines.b_first;
    r.lines.tokens = std::stoi(m[7]);
    runs.push_back(r);
  }
  return runs;
}

// sim's file names are ours (s0.cpp, t12.cpp): the index back.
int index_of(const std::string& file, char prefix) {
  const std::string name = fs::path(file).filename().string();
  if (name.size() < 6 || name[0] != prefix || name.substr(name.size() - 4) != ".cpp") return -1;
  try {
    return std::stoi(name.substr(1, name.size() - 5));
  } catch (const std::exception&) {
    return -1;
  }
}

std::string run_sim(const std::string& program, const std::vector<std::string>& arguments,
                    const fs::path& out) {
  std::vector<std::string> argv = {program, "-T", "-o", out.string()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  fs::remove(out);
  const ToolOutput r = run_tool(argv);
  if (r.exit_code != 0 || !fs::exists(out))
    throw std::runtime_error(program + " failed (exit " + std::to_string(r.exit_code) +
                             ") on the files in " + out.parent_path().string() + ": " +
                             first_errors(r.output, 5));
  return read_text(out);
}

}  // namespace

std::string SourceSet::joined() const {
  std::string all;
  for (const auto& [path, text] : files) {
    all += text;
    if (!text.empty() && text.back() != '\n') all += '\n';
  }
  return all;
}

std::string SourceSet::where(int line) const {
  int first = 1;
  for (const auto& [path, text] : files) {
    const int count = static_cast<int>(lines_of(text).size());
    if (line < first + count)
      return fs::path(path).filename().string() + ":" + std::to_string(line - first + 1);
    first += count;
  }
  return "line " + std::to_string(line);
}

LabSimilarity compare_lab(const std::string& lab, const std::vector<SourceSet>& submissions,
                          const SourceSet& handout, const SimilarityOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  LabSimilarity result;
  result.lab = lab;
  result.threshold = o.threshold;
  result.submissions = submissions.size();
  result.handout_files = handout.files.size();
  const std::string program = find_on_path(o.program);
  if (program.empty()) {
    result.not_checked = o.program +
                         " is not installed on this machine (Debian's package "
                         "similarity-tester): `apt-get install similarity-tester`, then "
                         "`workbook-grade summary OUT` compares the submissions. Nothing else in "
                         "this summary needs it.";
    return result;
  }
  result.checked = true;
  if (submissions.size() < 2) return result;
  fs::remove_all(o.scratch);
  fs::create_directories(o.scratch);
  const std::size_t n = submissions.size();
  std::vector<std::vector<std::string>> text(n);
  std::vector<std::string> raw_files, files;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string joined = submissions[i].joined();
    text[i] = lines_of(joined);
    raw_files.push_back((o.scratch / ("s" + std::to_string(i) + ".cpp")).string());
    write_text_atomic(raw_files.back(), joined);
  }

  // 1. The handout's runs blanked out of each copy.
  if (!handout.files.empty()) {
    const fs::path stub = o.scratch / "handout.cpp";
    write_text_atomic(stub, handout.joined());
    std::vector<std::string> arguments = {"-n", "-S"};
    arguments.insert(arguments.end(), raw_files.begin(), raw_files.end());
    arguments.insert(arguments.end(), {"/", stub.string()});
    for (const RawRun& r : parse_runs(run_sim(program, arguments, o.scratch / "handout.txt"))) {
      // -S compares new files with the old one only; either side may be printed first.
      const bool first = index_of(r.a, 's') >= 0;
      const int i = index_of(first ? r.a : r.b, 's');
      if (i < 0 || static_cast<std::size_t>(i) >= n) continue;
      const int from = first ? r.lines.a_first : r.lines.b_first;
      const int to = first ? r.lines.a_last : r.lines.b_last;
      for (int l = from; l <= to && l <= static_cast<int>(text[i].size()); ++l) {
        text[static_cast<std::size_t>(i)][static_cast<std::size_t>(l - 1)].clear();
        result.handout_lines[submissions[static_cast<std::size_t>(i)].id].insert(l);
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::string blanked;
    for (const std::string& l : text[i]) blanked += l + "\n";
    files.push_back((o.scratch / ("t" + std::to_string(i) + ".cpp")).string());
    write_text_atomic(files.back(), blanked);
  }

  // 2. Every pair in isolation, both ways.
  std::vector<std::string> arguments = {"-p", "-e", "-a"};
  arguments.insert(arguments.end(), files.begin(), files.end());
  static const std::regex percent_line(R"(^(\S+) consists for (\d+) % of (\S+) material)");
  std::map<std::pair<std::size_t, std::size_t>, double> percent;  // (i, j): % of i found in j
  for (const std::string& l : lines_of(run_sim(program, arguments, o.scratch / "percent.txt"))) {
    std::smatch m;
    if (!std::regex_search(l, m, percent_line)) continue;
    const int i = index_of(m[1], 't'), j = index_of(m[3], 't');
    if (i < 0 || j < 0 || i == j) continue;
    double& p = percent[{static_cast<std::size_t>(i), static_cast<std::size_t>(j)}];
    p = std::max(p, std::stod(m[2]));
  }
  std::map<std::pair<std::size_t, std::size_t>, SimilarPair> pairs;
  for (const auto& [key, p] : percent) {
    const auto [i, j] = key;
    const bool i_first = submissions[i].id < submissions[j].id;
    const std::pair<std::size_t, std::size_t> k = i_first ? key : std::pair{j, i};
    SimilarPair& pair = pairs[k];
    pair.a = submissions[k.first].id;
    pair.b = submissions[k.second].id;
    (i_first ? pair.a_in_b : pair.b_in_a) = p;
  }

  // 3. The runs of each pair above the threshold; the clusters they link.
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<std::pair<std::size_t, std::size_t>> listed;
  for (auto& [key, pair] : pairs) {
    if (pair.percent() < o.threshold) continue;
    parent[root(key.first)] = root(key.second);
    result.pairs.push_back(pair);
    listed.push_back(key);
  }
  std::vector<std::size_t> order(result.pairs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const SimilarPair &p = result.pairs[x], &q = result.pairs[y];
    return p.percent() != q.percent() ? p.percent() > q.percent()
                                      : std::tie(p.a, p.b) < std::tie(q.a, q.b);
  });
  std::vector<SimilarPair> sorted;
  for (std::size_t k = 0; k < order.size(); ++k) {
    SimilarPair pair = result.pairs[order[k]];
    const auto [i, j] = listed[order[k]];
    if (k < o.runs_for) {
      const std::string text_runs =
          run_sim(program, {"-n", "-s", files[i], files[j]}, o.scratch / "pair.txt");
      for (const RawRun& r : parse_runs(text_runs)) {
        const int ra = index_of(r.a, 't'), rb = index_of(r.b, 't');
        if (ra == rb) continue;
        MatchRun m = r.lines;
        if (static_cast<std::size_t>(ra) != i) {
          std::swap(m.a_first, m.b_first);
          std::swap(m.a_last, m.b_last);
        }
        pair.runs.push_back(m);
      }
      std::sort(pair.runs.begin(), pair.runs.end(),
                [](const MatchRun& x, const MatchRun& y) { return x.a_first < y.a_first; });
    }
    sorted.push_back(std::move(pair));
  }
  result.pairs = std::move(sorted);
  std::map<std::size_t, std::vector<std::string>> groups;
  for (std::size_t i = 0; i < n; ++i) groups[root(i)].push_back(submissions[i].id);
  for (auto& [r, ids] : groups)
    if (ids.size() >= 3) {
      std::sort(ids.begin(), ids.end());
      result.clusters.push_back(ids);
    }
  std::sort(result.clusters.begin(), result.clusters.end(),
            [](const auto& x, const auto& y) { return x.size() > y.size(); });
  fs::remove_all(o.scratch);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string side_by_side_html(const std::string& lab, const SimilarPair& pair, const SourceSet& a,
                              const SourceSet& b, const LabSimilarity& similarity) {
  // Each run a colour of its own (cycled), the same on both sides; a line in several runs shows the
  // first. A run may span the handout's lines (blanked when compared): those stay grey.
  static const char* colours[] = {"#ffe066", "#a5d8ff", "#b2f2bb", "#ffc9c9",
                                  "#d0bfff", "#ffd8a8", "#99e9f2", "#eebefa"};
  auto column = [&](const SourceSet& s, bool left) {
    const std::vector<std::string> lines = lines_of(s.joined());
    const auto found = similarity.handout_lines.find(s.id);
    const std::set<int> none;
    const std::set<int>& handout = found == similarity.handout_lines.end() ? none : found->second;
    std::vector<int> run_of(lines.size() + 1, -1);
    for (std::size_t r = 0; r < pair.runs.size(); ++r) {
      const MatchRun& m = pair.runs[r];
      const int first = left ? m.a_first : m.b_first, last = left ? m.a_last : m.b_last;
      for (int l = std::max(1, first); l <= last && l <= static_cast<int>(lines.size()); ++l)
        if (run_of[static_cast<std::size_t>(l)] < 0)
          run_of[static_cast<std::size_t>(l)] = static_cast<int>(r);
    }
    std::string html = "<div class=\"side\"><h2>" + html_escape(s.id) + "</h2><pre>";
    std::string file;
    for (std::size_t l = 1; l <= lines.size(); ++l) {
      // "vector_ops.cpp:12": the file once where it starts, then the line numbers.
      const std::string where = s.where(static_cast<int>(l));
      const std::size_t colon = where.rfind(':');
      if (colon != std::string::npos && where.substr(0, colon) != file) {
        file = where.substr(0, colon);
        html += "<span class=\"file\">" + html_escape(file) + "</span>\n";
      }
      html += "<span class=\"ln\">" +
              html_escape(colon == std::string::npos ? where : where.substr(colon + 1)) + "</span>";
      const int r = run_of[l];
      const bool theirs = handout.count(static_cast<int>(l)) > 0;
      if (theirs)
        html += "<span class=\"handout\" title=\"the handout's: not compared\">";
      else if (r >= 0)
        html += "<span class=\"run\" style=\"background:" + std::string(colours[r % 8]) +
                "\" title=\"run " + std::to_string(r + 1) + "\">";
      html += html_escape(lines[l - 1]);
      if (theirs || r >= 0) html += "</span>";
      html += "\n";
    }
    return html + "</pre></div>";
  };
  std::string runs = "<table><tr><th>run</th><th>" + html_escape(pair.a) + "</th><th>" +
                     html_escape(pair.b) + "</th><th>tokens</th></tr>";
  for (std::size_t r = 0; r < pair.runs.size(); ++r) {
    const MatchRun& m = pair.runs[r];
    runs += "<tr><td style=\"background:" + std::string(colours[r % 8]) + "\">" +
            std::to_string(r + 1) + "</td><td>" + html_escape(a.where(m.a_first)) + " to " +
            html_escape(a.where(m.a_last)) + "</td><td>" + html_escape(b.where(m.b_first)) +
            " to " + html_escape(b.where(m.b_last)) + "</td><td>" + std::to_string(m.tokens) +
            "</td></tr>";
  }
  runs += "</table>";
  const std::string title = "Lab " + lab + ": " + pair.a + " and " + pair.b;
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
         "</title><style>body{font-family:Helvetica,Arial,sans-serif;margin:1em}"
         ".pair{display:flex;gap:1em}.side{flex:1;min-width:0}"
         "pre{font-size:12px;background:#f8f9fa;padding:.5em;overflow-x:auto}"
         ".ln{color:#868e96;display:inline-block;min-width:3em;user-select:none}"
         ".file{font-weight:bold}.handout{color:#adb5bd}"
         "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px}"
         "</style></head><body><h1>" +
         html_escape(title) + "</h1><p>" + workbook::format_fixed(pair.a_in_b, 0) + "% of " +
         html_escape(pair.a) + "'s own code is found in " + html_escape(pair.b) + ", " +
         workbook::format_fixed(pair.b_in_a, 0) + "% of " + html_escape(pair.b) + "'s in " +
         html_escape(pair.a) +
         " (sim_c++ tokens; what the handout's stub already had is left out, and shown grey). "
         "Matching runs are "
         "coloured alike on both sides; identifiers, comments and layout may differ within a "
         "run.</p>" +
         runs + "<div class=\"pair\">" + column(a, true) + column(b, false) +
         "</div></body></html>\n";
}

}  // namespace workbook::grade
