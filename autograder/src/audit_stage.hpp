#pragma once
// Audit, between compile and link: the symbols a submission's objects define. A submission may
// define only its lab's functions. Private to the grader.
#include <grade/prepare.hpp>
#include <grade/rubric.hpp>

#include "workspace.hpp"

#include <string>
#include <vector>

namespace workbook::grade {

/// A symbol's name as C++ writes it (the name itself when it is not a mangled one).
std::string demangle(const std::string& name);

/// A submission may define only its lab's functions: no symbol the harness, the tests or GoogleTest
/// define (a redefinition would replace them in the test executable), and nothing outside the lab's
/// namespace except compiler-made template and inline copies. Returns the problems found.
std::vector<std::string> audit_symbols(const std::vector<std::string>& nm_lines,
                                       const LabRecipe& lab, const Rubric& rubric);

/// The audit's verdict on a lab's objects.
struct SymbolAudit {
  std::vector<std::string> problems;  ///< one line each, for the student; empty: nothing forbidden
  bool ok() const { return problems.empty(); }
};

/// Lists the objects' symbols (nm, in the sandbox: the objects are the student's) and audits them.
SymbolAudit audit_objects(const Context& c, const LabRecipe& lab, const Rubric& rubric,
                          const std::vector<std::string>& objects);

}  // namespace workbook::grade
