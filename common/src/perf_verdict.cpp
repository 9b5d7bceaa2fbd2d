// The perf verdict: its JSON form and its reporters (console, Markdown, SVG, the results' files).
#include <workbook/internal/perf_verdict.hpp>

#include <workbook/report.hpp>
#include <workbook/skip.hpp>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>

namespace workbook {

void to_json(nlohmann::json& j, const Summary& s) {
  j = to_json(s);
}

void from_json(const nlohmann::json& j, Summary& s) {
  s.count = j.at("count").get<std::size_t>();
  s.min = j.at("min").get<double>();
  s.q1 = j.at("q1").get<double>();
  s.median = j.at("median").get<double>();
  s.q3 = j.at("q3").get<double>();
  s.max = j.at("max").get<double>();
  s.mean = j.at("mean").get<double>();
  s.stddev = j.at("stddev").get<double>();
}

void to_json(nlohmann::json& j, const Analysis& a) {
  j = to_json(a);
}

void from_json(const nlohmann::json& j, Analysis& a) {
  a.work = {.ops = j.at("ops").get<double>(),
            .bytes = j.at("bytes").get<double>(),
            .traffic = j.at("traffic").get<Traffic>(),
            .threads = j.at("threads").get<unsigned>(),
            .compute = j.at("compute").get<Compute>(),
            .ops_unit = j.at("ops_unit").get<std::string>()};
  a.roofs = {.bandwidth_gbs = j.at("bandwidth_roof").at("gbs").get<double>(),
             .bandwidth_name = j.at("bandwidth_roof").at("name").get<std::string>(),
             .compute_gops = j.at("compute_roof").at("gops").get<double>(),
             .compute_name = j.at("compute_roof").at("name").get<std::string>()};
  a.seconds = j.at("seconds").get<double>();
  a.gbs = j.at("gbs").get<double>();
  a.gops = j.at("gops").get<double>();
  a.intensity = j.at("intensity").get<double>();
  a.attainable_gops = j.at("attainable_gops").get<double>();
  a.fraction_of_roof = j.at("fraction_of_roof").get<double>();
  a.fraction_of_bandwidth = j.at("fraction_of_bandwidth").get<double>();
  a.fraction_of_compute = j.at("fraction_of_compute").get<double>();
  a.memory_bound_model = j.at("memory_bound_model").get<bool>();
  a.bound = j.at("bound").get<Bound>();
  a.at_roofline = j.at("at_roofline").get<bool>();
}

}  // namespace workbook

namespace workbook::perf {
namespace {

// What the driver's check of a timed call found, in a line of the feedback.
std::string output_check_note(const std::optional<TimedOutputCheck>& check) {
  if (check && check->checked)
    return "Output: the output of a timed call, chosen at random, is the reference's (" +
           std::to_string(check->elements) + " elements compared).";
  if (check && check->why == "the perf case declares no output")
    return "Output: not compared with the reference's (the perf case declares no output).";
  return "Output: not compared with the reference's here (no reference: profile mode); the grader "
         "compares the output of a timed call with the reference's.";
}

void add_row(Table& t, const std::string& label, const Summary& s, const Analysis& a) {
  const RooflineCells c = roofline_cells(s, a);
  t.add({label, c.median, c.spread, c.gbs, c.gops, c.of_roof});
}

std::string markdown_row(const std::string& label, const Summary& s, const Analysis& a) {
  const RooflineCells c = roofline_cells(s, a);
  return "| " + label + " | " + c.median + " | " + c.gbs + " | " + c.gops + " | " + c.of_roof +
         " |\n";
}

std::string notes_text(const Verdict& v) {
  std::string text;
  for (const std::string& line : v.notes) text += line + "\n";
  return text;
}

// The ratio the verdict is judged by: the driver's (see Graded), else the workers' own.
double judged_ratio(const Verdict& v) {
  return v.graded && v.graded->ratio > 0 ? v.graded->ratio : v.ratio->median;
}

// How the ratio was judged, when it is not simply the workers' reports: a sentence per flag.
std::string graded_note(const Verdict& v) {
  if (!v.graded) return "";
  std::string text;
  if (std::abs(v.graded->ratio - v.graded->reported_ratio) > 0.005)
    text += "Judged by the driver's clock: " + format_fixed(v.graded->ratio, 2) +
            "x (the times the workers reported make it " +
            format_fixed(v.graded->reported_ratio, 2) + "x).\n";
  for (const std::string& flag : v.graded->flags) text += "Flagged: " + flag + "\n";
  return text;
}

// Lines as Markdown paragraphs.
std::string paragraphs(const std::string& lines) {
  std::string md;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);) md += line + "\n\n";
  return md;
}

std::string plot_path(const Verdict& v) {
  return (std::filesystem::path(v.results) / (v.case_name + ".svg")).string();
}

void print_fail(const Verdict& v, std::ostream& out) {
  out << "FAIL: " << v.message << "\n";
  if (!v.edit.empty()) out << "  Edit " << v.edit << ".\n";
  out << "  (inputs from WORKBOOK_SEED=" << v.base_seed << ")\n";
}

}  // namespace

int exit_code(const Verdict& v) {
  switch (v.outcome) {
    case Outcome::pass:
    case Outcome::recorded:
      return 0;
    case Outcome::fail:
      return 1;
    case Outcome::error:
      return 2;
    case Outcome::skipped:
      return kSkipReturnCode;
  }
  return 2;
}

void print(const Verdict& v, std::ostream& out) {
  if (v.outcome == Outcome::skipped) {
    out << v.test() << ": " << v.message << "\n";
    return;
  }
  // Measured: the case describes itself first.
  if (v.student && v.work) out << "  " << v.description << "\n";
  if (v.outcome == Outcome::error) {
    if (v.reason == Reason::reference_failed)
      out << "ERROR: the reference failed, which is a bug in the workbook, not in your code:\n"
          << v.message << "\n";
    else
      out << "ERROR: " << v.message << "\n";
    return;
  }
  if (v.outcome == Outcome::recorded) {
    out << "  recorded: " << v.case_name << " reaches "
        << format_percent(v.student->analysis.fraction_of_roof) << " of its roofline ("
        << verdict(v.student->analysis) << ") in " << (v.profile ? v.profile->path : "") << "\n";
    return;
  }
  if (!v.judged()) {
    print_fail(v, out);
    return;
  }
  const Analysis& mine = v.student->analysis;
  const Analysis& theirs = v.reference->analysis;
  Table table({"", "median", "spread", "GB/s", "G" + v.work->ops_unit + "/s", "% of roof"});
  add_row(table, "your " + v.function, v.student->timing, mine);
  add_row(table, v.reference_label, v.reference->timing, theirs);
  for (const ExtraResult& e : v.extras) add_row(table, e.label, e.timing, e.analysis);
  out << table.str();
  for (const ExtraResult& e : v.extras)
    out << "  " << e.label << ": " << format_fixed(e.time_over_yours, 2) << "x your time.\n";
  for (const std::string& line : v.notes) out << "  " << line << "\n";
  out << "  Ratio: your time / the reference's = " << format_fixed(judged_ratio(v), 2) << "x ("
      << v.ratio_note << "); within " << format_fixed(v.max_ratio, 2) << "x passes.\n";
  if (const std::string note = graded_note(v); !note.empty()) {
    std::istringstream lines(note);
    for (std::string line; std::getline(lines, line);) out << "  " << line << "\n";
  }
  out << "  " << output_check_note(v.output_check) << "\n";
  out << "  Roofline: " << verdict(mine) << ".\n";
  if (std::max(mine.fraction_of_roof, theirs.fraction_of_roof) > 1.05)
    out << "  (Above the roof: this machine runs faster now than when its ceilings were measured, "
           "on "
        << (v.ceilings ? v.ceilings->measured_at : "")
        << ". Re-measure them with workbook-probe --remeasure --cache " << v.ceilings_path
        << ".)\n";
  out << "  Next: " << v.next << "\n";
  out << "  Plot: " << plot_path(v) << " (and " << v.case_name << ".json, " << v.case_name
      << ".md)\n";
  if (v.outcome == Outcome::pass)
    out << "PASS: your " << v.function << " takes " << format_fixed(judged_ratio(v), 2)
        << "x the reference's time.\n";
  else
    print_fail(v, out);
}

std::string markdown(const Verdict& v, bool plot) {
  if (!v.judged()) return "";
  const std::string notes = notes_text(v);
  std::ostringstream md;
  md << "### " << v.test() << ": " << (v.outcome == Outcome::pass ? "pass" : "too slow") << "\n\n"
     << v.description << "\n\n"
     << "| | median | GB/s | G" << v.work->ops_unit << "/s | % of roof |\n|---|---|---|---|---|\n"
     << markdown_row("your " + v.function, v.student->timing, v.student->analysis)
     << markdown_row(v.reference_label, v.reference->timing, v.reference->analysis) << "\n"
     << "Your time is **" << format_fixed(judged_ratio(v), 2) << "x** the reference's ("
     << v.ratio_note << "); within " << format_fixed(v.max_ratio, 2) << "x passes.\n\n"
     << paragraphs(graded_note(v)) << (notes.empty() ? "" : notes + "\n")
     << output_check_note(v.output_check) << "\n\n"
     << "**Roofline:** " << verdict(v.student->analysis) << ".\n\n**Next:** " << v.next << "\n\n";
  if (plot) md << "![roofline](" << v.case_name << ".svg)\n";
  return md.str();
}

std::string roofline_plot(const Verdict& v) {
  if (!v.judged() || !v.ceilings) return "";
  const Analysis& mine = v.student->analysis;
  const Analysis& theirs = v.reference->analysis;
  std::vector<PlotPoint> points = {
      {"you: " + format_fixed(mine.gops, 2) + " G" + v.work->ops_unit + "/s", mine.intensity,
       mine.gops, PlotPoint::Role::student},
      {v.reference_label + ": " + format_fixed(theirs.gops, 2), theirs.intensity, theirs.gops,
       PlotPoint::Role::reference}};
  for (const ExtraResult& e : v.extras)
    points.push_back({e.label + ": " + format_fixed(e.analysis.gops, 2), e.analysis.intensity,
                      e.analysis.gops, PlotPoint::Role::other});
  std::vector<Traffic> drawn = {v.work->traffic};
  if (v.work->traffic != Traffic::l1) drawn.push_back(Traffic::l1);
  return roofline_svg(*v.ceilings, points,
                      {.title = v.lab + " " + v.case_name + ": " + v.description,
                       .bandwidths = drawn,
                       .compute = v.work->compute});
}

void write_results(const Verdict& v) {
  const std::filesystem::path folder = v.results;
  if (v.judged()) {
    write_file(folder / (v.case_name + ".svg"), roofline_plot(v));
    write_file(folder / (v.case_name + ".md"), markdown(v));
  }
  write_file(folder / (v.case_name + ".json"), nlohmann::json(v).dump(2) + "\n");
}

}  // namespace workbook::perf
