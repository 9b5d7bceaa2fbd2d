// The canary (see canary.hpp).
#include <grade/canary.hpp>

#include <grade/grade.hpp>
#include <grade/hash.hpp>
#include <grade/prepare.hpp>
#include <grade/util.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include <workbook/format.hpp>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

using nlohmann::json;

// This build of the grader: a cache proved by another build (another sandbox, another scoring) is
// not proved for this one.
std::string grader_identity() {
  return hash_hex(read_text("/proc/self/exe"));
}

// This machine as the trusted build depends on it (its CPU and compilers).
std::string machine_identity() {
  return hash_hex(build_identity());
}

// The first line of a text, for a list of one line per lab.
std::string one_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

// The first item of a lab that did not get `full` (full marks) or, for the stub, that scored.
std::string first_telling(const LabResult& lab, bool full) {
  for (const Item& i : lab.items) {
    const bool telling = full ? i.score < i.max_score - 1e-9 : i.score > 1e-9;
    if (!telling) continue;
    return i.name() + ": " + one_line(i.output);
  }
  return "";
}

// Grades @reference or @stub of `labs` and judges each lab: the reference gets every point, the
// stub none.
void try_submission(const std::string& which, const fs::path& cache,
                    const std::vector<std::string>& labs, const fs::path& logs,
                    const GradeOptions& base, Canary& c, std::ostream& log) {
  GradeOptions o = base;
  o.submission = which;
  o.id = "canary" + which.substr(1);
  o.cache = cache;
  o.perf = false;
  o.labs = labs;
  o.out = logs / which.substr(1);
  o.gradescope.clear();
  o.prairielearn.clear();
  fs::create_directories(o.out);
  std::ofstream grade_log(o.out / "grade.log");
  const GradeResult r = grade(o, grade_log);
  const bool reference = which == "@reference";
  for (const LabResult& lab : r.labs) {
    const std::string name = "lab " + lab.number;
    if (lab.status == LabStatus::not_graded || lab.status == LabStatus::unavailable) {
      c.notes.push_back(name + ": " + which + " could not be tried here (" + to_string(lab.status) +
                        (lab.notes.empty() ? "" : ": " + one_line(lab.notes.front())) + ")");
      continue;
    }
    if (lab.status != LabStatus::graded) {
      c.problems.push_back(name + ": " + which + " is " + to_string(lab.status) +
                           (lab.build_output.empty()
                                ? (lab.notes.empty() ? "" : ": " + first_errors(lab.notes[0], 3))
                                : ": " + first_errors(lab.build_output, 3)));
      continue;
    }
    const bool ok =
        reference ? lab.max_score > 0 && lab.score >= lab.max_score - 1e-9 : lab.score <= 1e-9;
    if (!ok)
      c.problems.push_back(
          name + ": " + which + " got " + format_fixed(lab.score, 1) + " of " +
          format_fixed(lab.max_score, 1) + " (" + first_telling(lab, reference) + ")" +
          (reference ? "" : ": is the stub in the trusted tree the one handed out?"));
  }
  log << "  canary: " << which << " " << format_fixed(r.score, 1) << " / "
      << format_fixed(r.max_score, 1) << " (log: " << (o.out / "grade.log").string() << ")\n"
      << std::flush;
}

// The labs of `labs` (empty: every lab of the cache), by the generation that built them: each
// generation's canary proves its own labs.
std::map<fs::path, std::vector<std::string>> labs_by_generation(
    const Cache& cache, const std::vector<std::string>& labs) {
  std::map<fs::path, std::vector<std::string>> by;
  for (const auto& [n, lab] : cache.labs)
    if (labs.empty() || std::find(labs.begin(), labs.end(), n) != labs.end())
      by[lab.generation].push_back(n);
  return by;
}

// Why the canary of `generation` does not stand for its `labs` (empty when it does).
std::string generation_problem(const fs::path& cache, const Cache& proved,
                               const fs::path& generation, const std::vector<std::string>& labs) {
  const std::string again = "; run `workbook-grade prepare --cache " + shell_quote(cache.string()) +
                            "` (it runs the canary)";
  const fs::path file = generation / "canary.json";
  if (!fs::exists(file))
    return "the grading cache " + cache.string() + " has not proved itself (no " +
           (generation.filename() / "canary.json").string() + ")" + again;
  const json j = read_json(file);
  // Only the labs to grade count: a lab whose reference fails does not stop the grading of others.
  std::string why;
  for (const json& p : j.value("problems", json::array())) {
    const std::string problem = p.get<std::string>();
    const bool counts = std::any_of(labs.begin(), labs.end(), [&](const auto& n) {
      return problem.rfind("lab " + n + ":", 0) == 0;
    });
    if (counts) why += "\n  " + problem;
  }
  if (!why.empty())
    return "the grading cache " + cache.string() + " failed its canary (" +
           j.value("when", std::string("?")) + "):" + why + "\nFix the cause" + again;
  const std::vector<std::string> tried = j.value("labs", std::vector<std::string>{});
  for (const std::string& n : labs)
    if (std::find(tried.begin(), tried.end(), n) == tried.end())
      return "the canary of the grading cache " + cache.string() + " did not try lab " + n + again;
  if (j.value("cache", "") != fs::weakly_canonical(proved.root).string())
    return "the grading cache was proved in " + j.value("cache", std::string("?")) +
           ", not where it is now (" + cache.string() + ")" + again;
  if (j.value("machine", "") != machine_identity())
    return "the grading cache " + cache.string() +
           " was proved on a machine with another CPU or compiler" + again;
  if (j.value("grader", "") != grader_identity())
    return "the grading cache " + cache.string() +
           " was proved by another build of workbook-grade" + again;
  return "";
}

}  // namespace

Canary run_canary(const fs::path& cache, const GradeOptions& base, std::ostream& log) {
  const Cache proved = Cache::load(cache);
  // A generation's own folder (a prepare proving what it built): its labs. The cache's folder:
  // every generation whose canary does not stand for the labs to grade, each for all its labs.
  std::map<fs::path, std::vector<std::string>> to_prove;
  const auto by_generation = labs_by_generation(proved, {});
  if (proved.dir == cache) {
    if (by_generation.count(proved.dir)) to_prove[proved.dir] = by_generation.at(proved.dir);
  } else {
    for (const auto& [generation, labs] : labs_by_generation(proved, base.labs))
      if (!generation_problem(cache, proved, generation, labs).empty())
        to_prove[generation] = by_generation.at(generation);
  }
  Canary c;
  c.grader = grader_identity();
  c.machine = machine_identity();
  c.cache = fs::weakly_canonical(proved.root).string();
  c.when = utc_now();
  for (const auto& [generation, labs] : to_prove) {
    std::string list;
    for (const std::string& n : labs) list += " " + n;
    log << "canary: grading @reference (every test must pass) and @stub (every test must fail) of "
           "lab(s)"
        << list << " in the sandbox ...\n"
        << std::flush;
    // Each generation's verdict and logs go into it (see prepare.hpp).
    Canary g = c;
    const fs::path logs = generation / "canary";
    try_submission("@reference", generation, labs, logs, base, g, log);
    try_submission("@stub", generation, labs, logs, base, g, log);
    g.passed = g.problems.empty();
    g.labs = labs;
    write_json(generation / "canary.json", {{"passed", g.passed},
                                            {"grader", g.grader},
                                            {"machine", g.machine},
                                            {"cache", g.cache},
                                            {"when", g.when},
                                            {"labs", g.labs},
                                            {"problems", g.problems},
                                            {"notes", g.notes}});
    for (const std::string& n : g.notes) log << "  canary: " << n << "\n";
    for (const std::string& p : g.problems) log << "  CANARY FAILED: " << p << "\n";
    // Each lab it could not try has a note for @reference and one for @stub.
    const bool tried_none = g.notes.size() >= 2 * labs.size();
    log << (!g.passed ? "canary: the cache does not grade as it should: nothing will be graded "
                        "with it. Fix the cause above (the logs are in " +
                            logs.string() + "), then run `workbook-grade prepare` again\n"
            : tried_none ? "canary: no lab could be tried on this machine (see the notes above)\n"
                         : "canary: the cache grades as it should\n")
        << std::flush;
    c.labs.insert(c.labs.end(), labs.begin(), labs.end());
    c.problems.insert(c.problems.end(), g.problems.begin(), g.problems.end());
    c.notes.insert(c.notes.end(), g.notes.begin(), g.notes.end());
  }
  c.passed = c.problems.empty();
  return c;
}

std::string canary_problem(const fs::path& cache, const std::vector<std::string>& labs) {
  Cache proved;
  try {
    proved = Cache::load(cache);
  } catch (const std::exception& e) {
    return e.what();
  }
  for (const auto& [generation, its_labs] : labs_by_generation(proved, labs))
    if (std::string why = generation_problem(cache, proved, generation, its_labs); !why.empty())
      return why;
  return "";
}

bool prove_cache(const fs::path& cache, const GradeOptions& base, std::ostream& log) {
  if (canary_problem(cache, base.labs).empty()) return true;
  run_canary(cache, base, log);
  return canary_problem(cache, base.labs).empty();
}

}  // namespace workbook::grade
