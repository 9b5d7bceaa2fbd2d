#include <grade/report.hpp>

#include <grade/leaderboard.hpp>
#include <grade/markdown_html.hpp>
#include <grade/util.hpp>

#include <workbook/report.hpp>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

using nlohmann::json;

std::string fixed(double v, int digits = 1) {
  return workbook::format_fixed(v, digits);
}

std::string points(double score, double max) {
  // Whole points print without decimals; perf points keep two.
  auto f = [](double v) { return std::abs(v - std::round(v)) < 1e-9 ? fixed(v, 0) : fixed(v, 2); };
  return f(score) + " / " + f(max);
}

// Text that goes into Markdown (report.md, Gradescope's and PrairieLearn's output) with parts that
// came from a student's process, a compiler or a file name: valid text, and nothing outside a code
// block that renders as more than text - no heading (a fake "## Score: 100 / 100"), no image, no
// link (javascript: or not), no raw HTML. The grader's own Markdown in it is code blocks and inline
// code, which stay as they are.
std::string safe_markdown(const std::string& raw) {
  const std::string text = valid_text(raw);
  std::string out;
  bool in_code = false;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    const std::size_t lead = line.find_first_not_of(' ');
    const bool fence = lead != std::string::npos && lead < 4 && line.compare(lead, 3, "```") == 0;
    if (fence) {
      in_code = !in_code;
    } else if (!in_code) {
      std::string safe;
      const bool underline =
          lead != std::string::npos &&
          line.find_first_not_of(std::string(" ") + line[lead]) == std::string::npos;
      bool in_span = false;  // inline code: shown as it is, escapes included
      for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '`' && (in_span || line.find('`', i + 1) != std::string::npos)) {
          in_span = !in_span;  // a span only where a backtick closes it, as Markdown reads it
          safe += c;
        } else if (in_span) {
          safe += c;
        } else if (c == '<') {
          safe += "&lt;";
        } else if (c == '>') {
          safe += "&gt;";
        } else if (c == '[' || c == ']' || c == '\\' || c == '`') {
          safe += '\\';  // no link or image, and no escape of our escapes
          safe += c;
        } else if (c == '#' && i == lead) {
          safe += "\\#";  // no heading
        } else if ((c == '~' || ((c == '=' || c == '-') && underline)) && i == lead) {
          safe += '\\';  // no underline heading (of the line above), and no code block
          safe += c;
        } else {
          safe += c;
        }
      }
      line = safe;
    }
    out += line;
    if (end == text.size()) break;
    out += '\n';
    start = end + 1;
  }
  if (in_code) out += "\n```";  // a code block the text opened ends with it
  return out;
}

std::string trim_trailing_newlines(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

bool shown(const Item& i) {
  return i.visibility == "visible";
}

std::string status_word(const Item& i) {
  if (i.details.value("excluded", false)) return "not graded";
  if (i.status == ItemStatus::passed) return "passed";
  if (i.status == ItemStatus::skipped) return "not graded";
  if (i.details.value("gated", false) || i.details.value("not_implemented", false))
    return "not credited";
  return "failed";
}

std::string lab_status(const LabResult& l) {
  switch (l.status) {
    case LabStatus::graded:
      return "graded";
    case LabStatus::compile_error:
      return "does not compile";
    case LabStatus::symbol_error:
      return "defines forbidden symbols";
    case LabStatus::link_error:
      return "does not link";
    case LabStatus::not_submitted:
      return "not submitted";
    case LabStatus::environment_error:
      return "not graded: the grader's machine failed (not your code; it will be graded again)";
    case LabStatus::unavailable:
      return "not gradable on this machine";
    case LabStatus::not_graded:
      return "not graded on this machine (every test skipped itself)";
  }
  return to_string(l.status);
}

// Each lab's perf cases as one table: where the kernels stand on the roofline.
std::string roofline_table(const LabResult& l) {
  std::string t;
  for (const Item& i : l.items) {
    if (i.source != Source::perf || !i.details.contains("ratio")) continue;
    if (t.empty())
      t = "| perf case | x reference | % of roof | achieved | intensity | points "
          "|\n|---|---|---|---|---|---|\n";
    const json& d = i.details;
    t += "| " + i.test + " | " + fixed(d.value("ratio", 0.0), 2) + "x" +
         (d.value("implausible", false) ? " (flagged)" : "") + " | " +
         workbook::format_percent(d.value("fraction_of_roof", 0.0)) + " | " +
         fixed(d.value("gops", 0.0), 2) + " G" + d.value("ops_unit", "FLOP") + "/s, " +
         fixed(d.value("gbs", 0.0), 1) + " GB/s | " + fixed(d.value("intensity", 0.0), 3) + " | " +
         points(i.score, i.max_score) + " |\n";
  }
  return t;
}

std::string summary_markdown(const GradeResult& r) {
  std::string md =
      "## Score: " + points(r.score, r.max_score) + "\n\n| lab | score | status |\n|---|---|---|\n";
  for (const LabResult& l : r.labs)
    md += "| " + l.number + " " + l.folder.substr(3) + " | " + points(l.score, l.max_score) +
          " | " + lab_status(l) + " |\n";
  md += "\n";
  for (const LabResult& l : r.labs) {
    if (!l.build_output.empty())
      md += "### Lab " + l.number + ": " + lab_status(l) + "\n\n" + "```\n" +
            replace_all(valid_text(l.build_output), "```", "'''") + "\n```\n\n";
    const std::string table = roofline_table(l);
    if (!table.empty()) md += "### Lab " + l.number + " on the roofline\n\n" + table + "\n";
  }
  md += "Inputs came from WORKBOOK_SEED=" + std::to_string(r.seed) +
        ": `WORKBOOK_SEED=" + std::to_string(r.seed) +
        " ctest --preset labNN -R <test>` replays a visible test with the same inputs.\n";
  return md;
}

}  // namespace

nlohmann::json gradescope_results(const GradeResult& r) {
  json tests = json::array();
  int number = 0;
  for (const LabResult& l : r.labs) {
    for (const Item& i : l.items) {
      const bool excluded = i.status == ItemStatus::skipped || i.details.value("excluded", false);
      json t = {{"name", i.name() + (excluded ? " (not graded)" : "")},
                {"number", std::to_string(++number)},
                {"score", i.score},
                {"max_score", i.max_score},
                {"output", safe_markdown(i.output)},
                {"output_format", "md"},
                {"visibility", i.visibility},
                {"tags", {"lab" + i.lab, to_string(i.source)}}};
      // A test not graded here reports no status: Gradescope shows it by its 0 of 0, and its name
      // says why.
      if (!excluded) t["status"] = i.status == ItemStatus::passed ? "passed" : "failed";
      tests.push_back(t);
    }
  }
  json results = {
      {"score", r.score},
      {"output", summary_markdown(r)},
      {"output_format", "md"},
      {"test_output_format", "md"},
      {"visibility", "visible"},
      {"stdout_visibility", "hidden"},
      {"execution_time", static_cast<int>(r.seconds)},
      {"tests", tests},
      {"extra_data", {{"seed", r.seed}, {"max_score", r.max_score}, {"grader", "workbook-grade"}}}};
  // Gradescope's leaderboard (shown where the assignment enables it, under each student's
  // pseudonym): the perf cases' times over the reference's.
  if (json board = gradescope_leaderboard(r); !board.empty()) results["leaderboard"] = board;
  return results;
}

// PrairieLearn's external-grader results, as https://prairielearn.readthedocs.io/en/latest/
// externalGrading/#grading-results documents them: `score` in [0, 1], `gradable`, `format_errors`,
// `message`, `output`, `images` and `tests` (name, description, points, max_points, message,
// output, images), the file at most 1 MB. Its element <pl-external-grader-results> shows `message`
// and `output`, top level and per test, in a <pre> after turning ANSI colours into HTML, which
// escapes everything else (apps/prairielearn/elements/pl-external-grader-results/
// pl-external-grader-results.py and .mustache in PrairieLearn's repository): no field renders HTML
// or Markdown, so they carry the reports' Markdown as plain text. The plots go in `images` as data:
// URLs, which the element shows as <img>, each beside its perf test.
nlohmann::json prairielearn_results(const GradeResult& r) {
  // Of the 1 MB, what the plots may take: the text gets the rest.
  constexpr std::size_t kImageBytes = 640 * 1024;
  std::size_t image_bytes = 0;
  int plots_left_out = 0;
  json tests = json::array();
  for (const LabResult& l : r.labs) {
    for (const Item& i : l.items) {
      json t = {{"name", i.name()},
                {"points", i.score},
                {"max_points", i.max_score},
                {"description", i.function}};
      if (!shown(i))
        t["message"] = "details hidden";
      else if (!i.output.empty())
        t["output"] = markdown_to_text(safe_markdown(i.output));
      if (i.source == Source::perf && shown(i))
        for (const auto& [name, svg] : l.plots) {
          if (name != i.test) continue;
          std::string url = "data:image/svg+xml;base64," + base64(svg);
          if (image_bytes + url.size() > kImageBytes) {
            ++plots_left_out;
            continue;
          }
          image_bytes += url.size();
          t["images"].push_back({{"label", "Roofline of " + i.name()}, {"url", std::move(url)}});
        }
      tests.push_back(t);
    }
  }
  // A lab that did not build, was not submitted whole, or could not be graded on this machine
  // makes the submission not gradable: PrairieLearn then charges the student no attempt and shows
  // the reasons (format_errors) instead of a score.
  json reasons = json::array();
  for (const LabResult& l : r.labs)
    if (l.status != LabStatus::graded)
      reasons.push_back(
          "lab " + l.number + ": " + to_string(l.status) +
          (l.notes.empty()
               ? ""
               : " (" + trim_trailing_newlines(first_errors(l.notes.front(), 3)) + ")"));
  std::string output = markdown_to_text(summary_markdown(r));
  if (plots_left_out > 0)
    output += "\n" + std::to_string(plots_left_out) +
              " roofline plot(s) left out: PrairieLearn takes at most 1 MB of results.\n";
  json out = {{"gradable", reasons.empty()},
              {"score", r.max_score > 0 ? r.score / r.max_score : 0.0},
              {"message", "Score " + points(r.score, r.max_score)},
              {"output", output},
              {"tests", tests}};
  if (!reasons.empty()) {
    out["format_errors"] = reasons;
    out["message"] = "Not graded: " + reasons[0].get<std::string>() +
                     (reasons.size() > 1
                          ? " (and " + std::to_string(reasons.size() - 1) + " more: see the output)"
                          : "");
  }
  return out;
}

namespace {

// The student's report, once for both files: report.md links each plot from `plots`, report.html
// has it inline.
MarkdownDocument report_document(const GradeResult& r, const std::string& plots) {
  MarkdownDocument d;
  std::string md = "# Grading report: " + safe_markdown(r.id) + "\n\n" + summary_markdown(r) + "\n";
  for (const LabResult& l : r.labs) {
    md += "## Lab " + l.number + " (" + l.folder + "): " + points(l.score, l.max_score) + "\n\n";
    md += "| test | points | result |\n|---|---|---|\n";
    for (const Item& i : l.items)
      md +=
          "| " + i.name() + " | " + points(i.score, i.max_score) + " | " + status_word(i) + " |\n";
    md += "\n";
    for (const Item& i : l.items) {
      if (i.output.empty() || (i.status == ItemStatus::passed && i.source != Source::perf))
        continue;
      md += "### " + i.name() + "\n\n" +
            (shown(i) ? safe_markdown(i.output)
                      : std::string("(details are shown after the due date)")) +
            "\n\n";
      if (i.source == Source::perf)
        for (const auto& [name, svg] : l.plots)
          if (name == i.test) {
            d.add(std::move(md));
            md.clear();
            d.add_figure("roofline of " + i.test, plots + "/lab" + l.number + "-" + name + ".svg",
                         svg);
          }
    }
  }
  d.add(std::move(md));
  return d;
}

}  // namespace

std::string markdown_report(const GradeResult& r, const std::string& plots) {
  return report_document(r, plots).markdown();
}

std::string html_report(const GradeResult& r) {
  return report_document(r, "plots").html_page("Grading report: " + valid_text(r.id));
}

std::vector<std::string> flags(const GradeResult& r) {
  std::vector<std::string> out;
  for (const LabResult& l : r.labs) {
    std::set<std::string> functions;  // one line per function, not one per test
    for (const Item& i : l.items) {
      if (i.details.value("implausible", false))
        out.push_back(i.name() + " (implausibly fast)");
      else if (i.details.value("forged", false))
        out.push_back(i.name() + " (forged test records)");
      else if (i.details.value("timed_output_differs", false))
        out.push_back(i.name() + " (timed output differs from the reference's)");
      else if (i.details.value("grader_error", false))
        out.push_back(i.name() + " (grader error)");
      else if (i.source == Source::perf && i.details.contains("flag"))
        out.push_back(i.name() + " (" + i.details.value("flag", std::string()) + ")");
      else if (i.source == Source::visible && i.details.contains("flag") &&
               functions.insert(i.function).second)
        out.push_back("lab" + l.number + " " + i.function + ": " +
                      i.details.value("flag", std::string()));
    }
  }
  return out;
}

std::vector<std::string> csv_header(const std::vector<std::string>& labs) {
  std::vector<std::string> h = {"id", "score", "max_score", "percent"};
  for (const std::string& l : labs) {
    h.push_back("lab" + l);
    h.push_back("lab" + l + "_max");
    h.push_back("lab" + l + "_status");
  }
  for (const char* c : {"flags", "seconds", "graded_at", "seed", "files"}) h.push_back(c);
  return h;
}

std::vector<std::string> csv_row(const GradeResult& r, const std::vector<std::string>& labs) {
  std::vector<std::string> row = {r.id, fixed(r.score, 2), fixed(r.max_score, 2),
                                  r.max_score > 0 ? fixed(100 * r.score / r.max_score, 1) : "0"};
  for (const std::string& n : labs) {
    const LabResult* found = nullptr;
    for (const LabResult& l : r.labs)
      if (l.number == n) found = &l;
    row.push_back(found ? fixed(found->score, 2) : "");
    row.push_back(found ? fixed(found->max_score, 2) : "");
    row.push_back(found ? to_string(found->status) : "not graded");
  }
  std::string flagged;
  for (const std::string& f : flags(r)) flagged += (flagged.empty() ? "" : "; ") + f;
  std::string files;
  for (const SubmittedFile& f : r.files)
    files += (files.empty() ? "" : " ") + f.path + ":" + f.hash;
  row.push_back(flagged);
  row.push_back(fixed(r.seconds, 1));
  row.push_back(r.started_at);
  row.push_back(std::to_string(r.seed));
  row.push_back(files);
  return row;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_field(fields[i]);
  return line + "\n";
}

std::vector<std::pair<std::string, std::string>> plots_of(const GradeResult& r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const LabResult& l : r.labs)
    for (const auto& [name, svg] : l.plots)
      out.emplace_back("lab" + l.number + "-" + name + ".svg", svg);
  return out;
}

void write_outputs(const GradeResult& r, const GradeOptions& o) {
  if (!o.out.empty()) {
    fs::create_directories(o.out);
    write_json(o.out / "record.json", r.to_json());
    write_json(o.out / "results.json", gradescope_results(r));
    write_json(o.out / "prairielearn.json", prairielearn_results(r));
    for (const auto& [file, svg] : plots_of(r)) write_text_atomic(o.out / "plots" / file, svg);
    write_text_atomic(o.out / "report.md", markdown_report(r));
    write_text_atomic(o.out / "report.html", html_report(r));
    std::vector<std::string> labs;
    for (const LabResult& l : r.labs) labs.push_back(l.number);
    write_text_atomic(o.out / "row.csv", csv_line(csv_header(labs)) + csv_line(csv_row(r, labs)));
  }
  if (!o.gradescope.empty()) write_json(o.gradescope, gradescope_results(r));
  if (!o.prairielearn.empty()) write_json(o.prairielearn, prairielearn_results(r));
}

}  // namespace workbook::grade
