// Audit (see audit_stage.hpp).
#include "audit_stage.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

#include <cxxabi.h>

namespace workbook::grade {

std::string demangle(const std::string& name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && text ? text : name;
  std::free(text);
  return out;
}

// A submission may define only its lab's functions: no symbol the harness, the tests or GoogleTest
// define (a redefinition would replace them in the test executable), and nothing outside the lab's
// namespace except compiler-made template and inline copies. Returns the problems found.
std::vector<std::string> audit_symbols(const std::vector<std::string>& nm_lines,
                                       const LabRecipe& lab, const Rubric& rubric) {
  std::map<std::string, char> trusted;
  {
    std::istringstream in(read_text(lab.symbols));
    for (std::string line; std::getline(in, line);)
      if (line.size() > 2) trusted[line.substr(2)] = line[0];
  }
  std::vector<std::regex> allowed;
  for (const std::string& r : rubric.allowed_symbols) allowed.emplace_back(r);
  const std::string lab_namespace = "lab" + lab.number + "::";
  std::vector<std::string> problems;
  for (const auto& [name, kind] : defined_symbols(nm_lines)) {
    if (std::any_of(allowed.begin(), allowed.end(),
                    [&](const std::regex& r) { return std::regex_search(name, r); }))
      continue;
    // Vague linkage (weak, or GNU unique: the static locals of inline functions) is how the
    // compiler emits a copy of an inline function or template in every object file that uses it;
    // the linker keeps one. Such a copy of a symbol the harness also has as vague is the same code,
    // not a replacement; so are the DWARF references to a type's typeinfo that exception handling
    // needs.
    const auto vague = [](char k) { return k == 'W' || k == 'V' || k == 'u'; };
    const bool weak = vague(kind);
    if (weak && name.rfind("DW.ref.", 0) == 0) continue;
    const std::string readable = demangle(name);
    const auto t = trusted.find(name);
    if (t != trusted.end() && (!weak || !vague(t->second))) {
      problems.push_back(
          "`" + readable +
          "` is already defined by the harness or the tests: your definition would replace theirs");
      continue;
    }
    if (name.rfind("_Z", 0) != 0) {
      problems.push_back(
          "`" + readable +
          "` is a global C symbol: it could replace a function of the C library "
          "for the whole test program. Make it static, or put it in an anonymous namespace");
      continue;
    }
    // nvcc gives each kernel a host-side launch stub, "__device_stub__" + the kernel's mangled
    // name, outside every namespace: it is judged by the kernel's own name.
    const std::string stub = "__device_stub__";
    const std::string judged =
        readable.rfind(stub, 0) == 0
            ? demangle("_" + readable.substr(stub.size(), readable.find('(') - stub.size()))
            : readable;
    if (!weak && judged.rfind(lab_namespace, 0) != 0 &&
        judged.rfind("typeinfo for " + lab_namespace, 0) != 0 &&
        judged.rfind("vtable for " + lab_namespace, 0) != 0 &&
        judged.rfind("typeinfo name for " + lab_namespace, 0) != 0) {
      problems.push_back("`" + judged + "` is defined outside namespace " +
                         lab_namespace.substr(0, lab_namespace.size() - 2) +
                         ": define your helpers (kernels too) in an anonymous namespace inside it, "
                         "or as static functions");
    }
  }
  return problems;
}

SymbolAudit audit_objects(const Context& c, const LabRecipe& lab, const Rubric& rubric,
                          const std::vector<std::string>& objects) {
  SandboxSpec s = base_spec(c, rubric, 60);
  s.limits.output_keep_bytes = 4 << 20;
  s.argv = {"/usr/bin/nm", "-P", "-g", "--defined-only"};
  s.argv.insert(s.argv.end(), objects.begin(), objects.end());
  s.mounts.push_back({c.ws.obj(lab.name()).string(), false});
  const RunResult r = run_sandboxed(s);
  std::vector<std::string> lines;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  SymbolAudit audit;
  audit.problems = r.ok()
                       ? audit_symbols(lines, lab, rubric)
                       : std::vector<std::string>{"its symbols could not be read: " + r.describe()};
  return audit;
}

}  // namespace workbook::grade
