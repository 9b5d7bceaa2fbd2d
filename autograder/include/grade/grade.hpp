#pragma once
/// \file grade.hpp
/// \brief Grading one submission: its whitelisted files copied into a fresh workspace beside the
/// trusted build, each lab compiled, linked and run on its own, in the sandbox, and scored by the
/// lab's rubric.

#include <grade/options.hpp>
#include <grade/prepare.hpp>
#include <grade/result.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace workbook::grade {

/// Grades a submission and writes every output. Progress goes to `log`. Throws only for a problem
/// of the grader or its cache (a bad submission is a score, not an error).
GradeResult grade(const GradeOptions& options, std::ostream& log);

/// The launcher the perf driver runs instead of the student's worker: the sandbox, then the worker.
/// argv: SPEC.json [worker arguments...]. Returns the worker's exit status.
int sandbox_exec(const std::vector<std::string>& args);

}  // namespace workbook::grade
