#pragma once
/// \file report.hpp
/// \brief What a graded submission produces: Gradescope's results.json, PrairieLearn's results,
/// the JSON record, a Markdown and an HTML report with the roofline plots, and a CSV row.

#include <grade/options.hpp>
#include <grade/result.hpp>

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace workbook::grade {

/// Gradescope's results.json: tests with name, score, max_score, status, output (Markdown),
/// visibility; the top-level output summarises every lab with its roofline feedback.
nlohmann::json gradescope_results(const GradeResult& result);

/// PrairieLearn's external-grader results: gradable, score in [0, 1], message, tests with points.
nlohmann::json prairielearn_results(const GradeResult& result);

/// The student's report. `plots` is the folder of the SVGs, relative to the Markdown file.
std::string markdown_report(const GradeResult& result, const std::string& plots = "plots");
/// The same, as one self-contained HTML page (the plots inline).
std::string html_report(const GradeResult& result);

/// What the instructor should look at in one result, one line each: tests flagged as implausibly
/// fast, as carrying forged records or as hit by a grader error, and each function whose visible
/// tests passed while its gating hidden tests failed (a visible test's details["flag"] says why).
std::vector<std::string> flags(const GradeResult& result);

/// The gradebook's columns for these labs, and one submission's row.
std::vector<std::string> csv_header(const std::vector<std::string>& labs);
std::vector<std::string> csv_row(const GradeResult& result, const std::vector<std::string>& labs);
std::string csv_line(const std::vector<std::string>& fields);

/// Writes record.json, results.json, prairielearn.json, report.md, report.html, row.csv and
/// plots/*.svg into options.out, and results.json where options.gradescope and options.prairielearn
/// say.
void write_outputs(const GradeResult& result, const GradeOptions& options);

/// The roofline SVGs of a result, by file name (lab01-relu.svg), as grading wrote them.
std::vector<std::pair<std::string, std::string>> plots_of(const GradeResult& result);

}  // namespace workbook::grade
