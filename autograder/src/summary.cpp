// The class summary (see summary.hpp): everything here reads the batch's records and the sources
// kept beside them; nothing is graded or run again.
#include <grade/summary.hpp>

#include <grade/anomalies.hpp>
#include <grade/leaderboard.hpp>
#include <grade/markdown_html.hpp>
#include <grade/prepare.hpp>
#include <grade/report.hpp>
#include <grade/rescore.hpp>
#include <grade/similarity.hpp>

#include <workbook/ceilings.hpp>
#include <workbook/report.hpp>
#include <workbook/stats.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

using nlohmann::json;

std::string fixed(double v, int digits = 1) {
  return workbook::format_fixed(v, digits);
}

// A student's text (a leaderboard name) in the summary's Markdown: inline code, shown as it is.
std::string code_span(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), '`'), text.end());
  return "`" + text + "`";
}

// At most this many similar pairs per lab are listed, each with its side-by-side page; the CSV
// beside the summary has them all (a class copying from one source makes many pairs: its cluster
// names them all).
constexpr std::size_t kPairsListed = 100;

std::string histogram_svg(const std::vector<double>& percents, const std::string& title) {
  std::vector<int> bins(10);
  for (double p : percents)
    bins[static_cast<std::size_t>(std::clamp(static_cast<int>(p / 10), 0, 9))]++;
  const int most = std::max(1, *std::max_element(bins.begin(), bins.end()));
  const double left = 50, bottom = 260, width = 56, height = 200;
  std::string s =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"660\" height=\"310\" "
      "font-family=\"Helvetica, Arial, sans-serif\" "
      "font-size=\"12\">\n<title>" +
      html_escape(title) +  // its accessible name, also inlined in summary.html
      "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"50\" "
      "y=\"28\" font-size=\"16\" "
      "font-weight=\"bold\">" +
      html_escape(title) + "</text>\n";
  for (int i = 0; i < 10; ++i) {
    const double h = height * bins[static_cast<std::size_t>(i)] / most;
    const double x = left + i * width;
    s += "<rect x=\"" + fixed(x + 4) + "\" y=\"" + fixed(bottom - h) + "\" width=\"" +
         fixed(width - 8) + "\" height=\"" + fixed(h) + "\" fill=\"#1c7ed6\"/>\n";
    if (bins[static_cast<std::size_t>(i)] > 0)
      s += "<text x=\"" + fixed(x + width / 2) + "\" y=\"" + fixed(bottom - h - 5) +
           "\" text-anchor=\"middle\">" + std::to_string(bins[static_cast<std::size_t>(i)]) +
           "</text>\n";
    s += "<text x=\"" + fixed(x + width / 2) + "\" y=\"" + fixed(bottom + 16) +
         "\" text-anchor=\"middle\">" + std::to_string(10 * i) +
         (i == 9 ? "-100" : "-" + std::to_string(10 * i + 9)) + "</text>\n";
  }
  s +=
      "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(bottom) + "\" x2=\"" +
      fixed(left + 10 * width) + "\" y2=\"" + fixed(bottom) + "\" stroke=\"#444\"/>\n<text x=\"" +
      fixed(left + 5 * width) + "\" y=\"" + fixed(bottom + 40) +
      "\" text-anchor=\"middle\">score (% of the maximum)</text>\n<text transform=\"translate(24," +
      fixed(bottom - height / 2) +
      ") rotate(-90)\" text-anchor=\"middle\">submissions</text>\n</svg>\n";
  return s;
}

// A record's plots, read back from the files grading wrote beside it (record.json names them):
// outputs rewritten by a re-score keep them.
void load_plots(GradeResult& r, const fs::path& dir) {
  const json record = read_json(dir / "record.json");
  for (LabResult& l : r.labs)
    for (const json& lab : items_of(record, "labs"))
      if (lab.value("lab", "") == l.number)
        for (const json& p : items_of(lab, "plots")) {
          const fs::path svg = dir / "plots" / p.value("svg", "");
          if (fs::is_regular_file(svg)) l.plots.emplace_back(p.value("case", ""), read_text(svg));
        }
}

// Every record scored again under the cache's rubrics; each submission's outputs rewritten.
std::string rescore_section(std::vector<GradeResult>& results, const std::vector<fs::path>& dirs,
                            const Cache& cache, std::ostream& log) {
  std::map<std::string, std::vector<std::string>> regrade;  // the change -> the ids it concerns
  std::string changed;
  int changes = 0;
  for (std::size_t k = 0; k < results.size(); ++k) {
    GradeResult& r = results[k];
    load_plots(r, dirs[k]);
    const Rescored now = rescore(r, cache);
    for (const std::string& why : now.needs_regrade) regrade[why].push_back(r.id);
    if (std::abs(now.result.score - r.score) > 1e-9 ||
        std::abs(now.result.max_score - r.max_score) > 1e-9) {
      ++changes;
      changed += "| " + r.id + " | " + fixed(r.score, 2) + " / " + fixed(r.max_score, 2) + " | " +
                 fixed(now.result.score, 2) + " / " + fixed(now.result.max_score, 2) + " |\n";
    }
    GradeOptions o;
    o.out = dirs[k];
    write_outputs(now.result, o);
    r = now.result;
  }
  log << "re-scored " << results.size() << " records under the rubrics of " << cache.root.string()
      << ": " << changes << " scores changed, " << regrade.size()
      << " change(s) that need a re-grade\n";
  std::string md = "## Re-scored under the current rubrics\n\n" + std::to_string(results.size()) +
                   " records scored again from what they recorded (nothing was run again); " +
                   std::to_string(changes) + " scores changed.\n\n";
  if (!changed.empty()) md += "| submission | before | now |\n|---|---|---|\n" + changed + "\n";
  if (!regrade.empty()) {
    md +=
        "### Changes a re-score cannot follow\n\nThese change what a run would find, not only "
        "what it is worth: the scores above are what the last run found (a new test or perf "
        "case counts for nothing) until the submissions are graded again (`workbook-grade batch "
        "SUBMISSIONS --out OUT --regrade`, or `--only ID,ID` for "
        "those named).\n\n";
    for (const auto& [why, ids] : regrade) {
      md += "- " + why + ": ";
      for (std::size_t i = 0; i < ids.size() && i < 10; ++i)
        md += (i ? ", " : "") + ("`" + ids[i] + "`");
      if (ids.size() > 10) md += " and " + std::to_string(ids.size() - 10) + " more";
      md += "\n";
    }
    md += "\n";
  }
  return md;
}

// Each lab's submitted files, from the copies grading kept (sources/); the handout from the cache.
std::string similarity_section(const std::vector<GradeResult>& results,
                               const std::vector<fs::path>& dirs,
                               const std::vector<std::string>& labs, const SummaryOptions& o,
                               const fs::path& out, std::ostream& log) {
  std::string md = "## Similar submissions\n\n";
  std::vector<std::string> not_checked;
  for (const std::string& n : labs) {
    std::vector<SourceSet> sets;
    std::size_t without_sources = 0;
    std::string folder;
    for (std::size_t k = 0; k < results.size(); ++k)
      for (const LabResult& l : results[k].labs) {
        if (l.number != n) continue;
        folder = l.folder;
        if (l.status == LabStatus::not_submitted) continue;
        SourceSet s;
        s.id = results[k].id;
        bool kept = true;
        for (const SubmittedFile& f : results[k].files) {
          if (f.path.rfind("labs/" + l.folder + "/", 0) != 0) continue;
          const fs::path copy = dirs[k] / "sources" / f.path;
          if (!fs::is_regular_file(copy)) {
            kept = false;
            break;
          }
          s.files.emplace_back(f.path.substr(6 + l.folder.size()), read_text(copy));
        }
        if (!kept || s.files.empty()) {
          ++without_sources;
          continue;
        }
        std::sort(s.files.begin(), s.files.end());
        sets.push_back(std::move(s));
      }
    if (sets.empty() && without_sources == 0) continue;
    // The handout: the trusted tree's stub of each file the class submitted.
    SourceSet handout;
    handout.id = "handout";
    std::set<std::string> names;
    for (const SourceSet& set : sets)
      for (const auto& [name, text] : set.files) names.insert(name);
    for (const std::string& name : names) {
      const fs::path stub = o.trusted / "labs" / folder / name;
      if (!o.trusted.empty() && fs::is_regular_file(stub))
        handout.files.emplace_back(name, read_text(stub));
    }
    const std::string handout_note =
        !handout.files.empty() ? ""
        : o.trusted.empty()    ? "no --trusted tree: the handout's stub is not subtracted, so "
                                 "what every student got counts as similar"
                               : "no stub of these files in " +
                                  (o.trusted / "labs" / folder).string() + ": nothing subtracted";
    SimilarityOptions so;
    so.threshold = o.similarity_threshold;
    so.runs_for = kPairsListed;
    so.scratch = out / "summary" / (".sim-" + std::to_string(getpid()));
    // sim failing on one lab's files costs that lab's similarity, not the summary.
    LabSimilarity s;
    try {
      s = compare_lab(n, sets, handout, so);
    } catch (const std::exception& e) {
      md += "### Lab " + n + "\n\nNot compared: " + e.what() + " (its input files are kept in " +
            so.scratch.string() + "; run `workbook-grade summary OUT` again once it is fixed).\n\n";
      log << "  lab " << n << ": similarity failed: " << e.what() << "\n";
      continue;
    }
    if (!s.checked) {
      not_checked.push_back(s.not_checked);
      break;  // the same sentence for every lab
    }
    log << "  lab " << n << ": " << sets.size() << " submissions compared in " << fixed(s.seconds)
        << " s, " << s.pairs.size() << " pairs at or above " << fixed(o.similarity_threshold, 0)
        << "%\n";
    md += "### Lab " + n + "\n\n" + std::to_string(sets.size()) +
          " submissions compared by sim_c++ in " + fixed(s.seconds) + " s";
    if (!handout.files.empty()) {
      md += " (the handout subtracted: ";
      for (std::size_t i = 0; i < handout.files.size(); ++i)
        md += (i ? ", " : "") + ("`" + handout.files[i].first + "`");
      md += ")";
    }
    md += ".";
    if (!handout_note.empty()) md += " Note: " + handout_note + ".";
    if (without_sources > 0)
      md += " " + std::to_string(without_sources) +
            " graded without their sources kept (graded by an older grader): not compared.";
    md += "\n\n";
    std::string csv = csv_line({"a", "b", "percent_a_in_b", "percent_b_in_a"});
    for (const SimilarPair& p : s.pairs)
      csv += csv_line({p.a, p.b, fixed(p.a_in_b, 0), fixed(p.b_in_a, 0)});
    write_text_atomic(out / "summary" / ("similarity-lab" + n + ".csv"), csv);
    if (s.pairs.empty()) {
      md += "No pair at or above " + fixed(o.similarity_threshold, 0) +
            "% of a submission's own code.\n\n";
      continue;
    }
    md += "Pairs at or above " + fixed(o.similarity_threshold, 0) +
          "% of a submission's own code (its tokens, the handout's left out) found in the other";
    if (s.pairs.size() > kPairsListed)
      md += "; the first " + std::to_string(kPairsListed) + " of " +
            std::to_string(s.pairs.size()) + " (all in `summary/similarity-lab" + n + ".csv`)";
    md +=
        ":\n\n| first | second | % of first in second | % of second in first | runs | side by side "
        "|\n"
        "|---|---|---|---|---|---|\n";
    std::map<std::string, const SourceSet*> by_id;
    for (const SourceSet& set : sets) by_id[set.id] = &set;
    for (std::size_t i = 0; i < s.pairs.size() && i < kPairsListed; ++i) {
      const SimilarPair& p = s.pairs[i];
      const std::string page = "summary/similarity/lab" + n + "/" + p.a + "--" + p.b + ".html";
      write_text_atomic(out / page, side_by_side_html(n, p, *by_id[p.a], *by_id[p.b], s));
      md += "| `" + p.a + "` | `" + p.b + "` | " + fixed(p.a_in_b, 0) + "% | " +
            fixed(p.b_in_a, 0) + "% | " + std::to_string(p.runs.size()) + " | [view](" + page +
            ") |\n";
    }
    md += "\n";
    for (const std::vector<std::string>& c : s.clusters) {
      md += "- A cluster of " + std::to_string(c.size()) + ": ";
      for (std::size_t i = 0; i < c.size(); ++i) md += (i ? ", " : "") + ("`" + c[i] + "`");
      md += "\n";
    }
    if (!s.clusters.empty()) md += "\n";
  }
  for (const std::string& why : not_checked) md += "Similarity was not checked: " + why + "\n\n";
  return md;
}

std::string anomalies_section(const std::vector<GradeResult>& results, const fs::path& trusted) {
  // The reference's size: its files of the names the class submitted, per lab.
  std::map<std::string, std::uint64_t> reference_bytes;
  std::set<std::pair<std::string, std::string>> counted;  // (lab, path)
  for (const GradeResult& r : results)
    for (const LabResult& l : r.labs)
      for (const SubmittedFile& f : r.files) {
        if (trusted.empty() || f.path.rfind("labs/" + l.folder + "/", 0) != 0 ||
            !counted.insert({l.number, f.path}).second)
          continue;
        const fs::path p = trusted / "solutions" / f.path.substr(5);
        if (fs::is_regular_file(p)) reference_bytes[l.number] += fs::file_size(p);
      }
  const std::vector<Anomaly> found = find_anomalies(results, reference_bytes);
  std::string md = "## Anomalies worth a look\n\n";
  if (found.empty()) {
    md += "None found.";
  } else {
    md += "| submission | lab | what | evidence |\n|---|---|---|---|\n";
    for (const Anomaly& a : found)
      md += "| `" + a.id + "` | " + a.lab + " | " + a.kind + " | " + a.evidence + " |\n";
  }
  md += "\nNot checked: identical outputs from different code (records keep no test outputs)";
  if (reference_bytes.empty())
    md +=
        "; a kernel much faster than the reference from a much shorter source (no prepared "
        "cache to read the reference's size from)";
  return md + ".\n\n";
}

std::string leaderboard_section(const std::vector<GradeResult>& results,
                                const std::vector<std::string>& labs, const fs::path& out) {
  std::string md;
  for (const std::string& n : labs) {
    bool timed = false;
    for (const GradeResult& r : results)
      for (const LabResult& l : r.labs)
        for (const Item& i : l.items) timed = timed || (l.number == n && i.source == Source::perf);
    if (!timed) continue;
    const LabLeaderboard board = lab_leaderboard(n, results);
    const std::string stem = "summary/leaderboard-lab" + n;
    write_text_atomic(out / (stem + ".html"), leaderboard_html(board));
    write_text_atomic(out / (stem + ".csv"), leaderboard_csv(board));
    md += "- Lab " + n + ": " + std::to_string(board.opted_in) + " submissions asked to be listed";
    if (board.not_timed > 0)
      md +=
          " (" + std::to_string(board.not_timed) + " without a credited time for every perf case)";
    md += "; [the page](" + stem + ".html), [CSV](" + stem + ".csv).";
    for (const auto& [machine, entries] : board.boards) {
      md += " " + machine + ": ";
      for (std::size_t k = 0; k < entries.size() && k < 3; ++k)
        md += (k ? ", " : "") + std::to_string(k + 1) + ". " + code_span(entries[k].name) + " " +
              fixed(entries[k].ratio, 2) + "x";
      md += ".";
    }
    md += "\n";
  }
  if (md.empty()) return "";
  return "## Leaderboards\n\nOpt-in (a `leaderboard_name` in leaderboard.txt), one board per "
         "machine kind, ranked by the time over the reference's.\n\n" +
         md + "\n";
}

}  // namespace

void write_summary(const fs::path& out, const SummaryOptions& o, std::ostream& log) {
  std::vector<GradeResult> results;
  std::vector<fs::path> dirs;
  if (fs::exists(out / "submissions")) {
    for (const auto& e : fs::directory_iterator(out / "submissions")) {
      const std::string name = e.path().filename().string();
      if (!e.is_directory() || name.empty() || name[0] == '.') continue;
      if (!fs::exists(e.path() / "record.json")) continue;
      dirs.push_back(e.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());  // the folder's name is the id
  for (const fs::path& d : dirs)
    results.push_back(GradeResult::from_json(read_json(d / "record.json")));
  std::unique_ptr<Cache> cache;
  std::string cache_problem = "no --cache given";
  if (o.rescore && !o.cache.empty()) {
    try {
      cache = std::make_unique<Cache>(Cache::load(o.cache));
    } catch (const std::exception& e) {
      cache_problem = e.what();
    }
  }
  std::string rescored;
  if (o.rescore) {
    if (!cache)
      throw std::runtime_error("summary --rescore: the rubrics come from the prepared cache, and " +
                               o.cache.string() + " could not be read (" + cache_problem +
                               "): run `workbook-grade prepare`, or give its --cache, then "
                               "`workbook-grade summary " +
                               out.string() + " --rescore` again");
    rescored = rescore_section(results, dirs, *cache, log);
  }
  std::set<std::string> lab_set;
  for (const GradeResult& r : results)
    for (const LabResult& l : r.labs) lab_set.insert(l.number);
  const std::vector<std::string> labs(lab_set.begin(), lab_set.end());

  std::string csv = csv_line(csv_header(labs));
  for (const GradeResult& r : results) csv += csv_line(csv_row(r, labs));
  write_text_atomic(out / "gradebook.csv", csv);

  std::vector<double> percents;
  for (const GradeResult& r : results)
    percents.push_back(r.max_score > 0 ? 100 * r.score / r.max_score : 0);
  const fs::path plots = out / "summary";
  const std::string scores_svg =
      histogram_svg(percents, "Scores of " + std::to_string(results.size()) + " submissions");
  write_text_atomic(plots / "scores.svg", scores_svg);

  std::string md = "# Class summary\n\n" + std::to_string(results.size()) + " submissions graded";
  if (!percents.empty()) {
    const Summary s = summarize(percents);
    md += ": median " + fixed(s.median) + "%, mean " + fixed(s.mean) + "%, from " + fixed(s.min) +
          "% to " + fixed(s.max) + "%";
  }
  // summary.md links the plots, summary.html has them inline.
  MarkdownDocument summary;
  summary.add(md + ".\n\n");
  summary.add_figure("score distribution", "summary/scores.svg", scores_svg);
  md = "| lab | median | mean | full marks | does not build | not submitted |\n"
       "|---|---|---|---|---|---|\n";
  std::vector<std::pair<std::string, std::string>> lab_plots;
  for (const std::string& n : labs) {
    std::vector<double> scores;
    int full = 0, broken = 0, missing = 0;
    double max = 0;
    // The class on the roofline: every submission's kernels, and the reference per case.
    std::vector<workbook::PlotPoint> points;
    std::map<std::string, std::vector<std::pair<double, double>>>
        reference;  // case -> (intensity, gops)
    std::set<workbook::Traffic> traffics;
    bool int8 = false;
    json ceilings;
    for (const GradeResult& r : results) {
      for (const LabResult& l : r.labs) {
        if (l.number != n) continue;
        scores.push_back(l.score);
        max = std::max(max, l.max_score);
        full += l.max_score > 0 && l.score >= l.max_score - 1e-6;
        broken += l.status == LabStatus::compile_error || l.status == LabStatus::link_error ||
                  l.status == LabStatus::symbol_error;
        missing += l.status == LabStatus::not_submitted;
        for (const Item& i : l.items) {
          if (i.source != Source::perf || !i.details.contains("gops") ||
              i.details.value("implausible", false))
            continue;
          const double x = i.details.value("intensity", 0.0), y = i.details.value("gops", 0.0);
          points.push_back({r.id + " " + i.test, x, y, workbook::PlotPoint::Role::other});
          reference[i.test].emplace_back(x, y * i.details.value("ratio", 1.0));
          traffics.insert(workbook::traffic_from_string(i.details.value("traffic", "copy")));
          int8 = int8 || i.details.value("ops_unit", "FLOP") == "OP";
          if (ceilings.is_null() && !r.ceilings.is_null()) ceilings = r.ceilings;
        }
      }
    }
    const Summary s = scores.empty() ? Summary{} : summarize(scores);
    md += "| " + n + " | " + fixed(s.median) + " / " + fixed(max) + " | " + fixed(s.mean) + " | " +
          std::to_string(full) + " | " + std::to_string(broken) + " | " + std::to_string(missing) +
          " |\n";
    if (!points.empty() && !ceilings.is_null()) {
      for (const auto& [name, list] : reference) {
        std::vector<double> ys;
        for (const auto& p : list) ys.push_back(p.second);
        points.push_back({"reference " + name, list.front().first, summarize(ys).median,
                          workbook::PlotPoint::Role::reference});
      }
      try {
        workbook::PlotOptions options{.title = "Lab " + n + ": the class on the roofline",
                                      .label_others = false};
        options.bandwidths.assign(traffics.begin(), traffics.end());
        if (std::find(options.bandwidths.begin(), options.bandwidths.end(),
                      workbook::Traffic::l1) == options.bandwidths.end())
          options.bandwidths.push_back(workbook::Traffic::l1);
        options.compute = int8 ? workbook::Compute::int8 : workbook::Compute::fp32;
        const std::string svg =
            workbook::roofline_svg(workbook::Ceilings::from_json(ceilings), points, options);
        write_text_atomic(plots / ("lab" + n + "-roofline.svg"), svg);
        lab_plots.emplace_back(n, svg);
      } catch (const std::exception& e) {
        log << "  lab " << n << ": no class roofline (" << e.what() << ")\n";
      }
    }
  }
  summary.add(md + "\n");
  for (const auto& [n, svg] : lab_plots)
    summary.add_figure("lab " + n + " roofline", "summary/lab" + n + "-roofline.svg", svg);
  summary.add(rescored);
  std::string flagged;
  for (const GradeResult& r : results)
    for (const std::string& f : flags(r)) flagged += "- " + r.id + ": " + f + "\n";
  if (!flagged.empty()) summary.add("## For the instructor to look at\n\n" + flagged + "\n");
  summary.add(anomalies_section(results, o.trusted));
  if (o.similarity) summary.add(similarity_section(results, dirs, labs, o, out, log));
  summary.add(leaderboard_section(results, labs, out));
  write_text_atomic(out / "summary.md", summary.markdown());
  write_text_atomic(out / "summary.html", summary.html_page("Class summary"));
  log << "gradebook: " << (out / "gradebook.csv").string() << " (" << results.size()
      << " submissions); summary: " << (out / "summary.md").string() << "\n";
}

}  // namespace workbook::grade
