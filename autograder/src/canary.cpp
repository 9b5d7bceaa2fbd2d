// The canary (see canary.hpp).
#include <grade/canary.hpp>

#include <grade/grade.hpp>
#include <grade/prepare.hpp>
#include <grade/util.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
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

// Grades @reference or @stub and judges each lab: the reference gets every point, the stub none.
void try_submission(const std::string& which, const fs::path& cache, const fs::path& logs,
                    const GradeOptions& base, Canary& c, std::ostream& log) {
  GradeOptions o = base;
  o.submission = which;
  o.id = "canary" + which.substr(1);
  o.cache = cache;
  o.perf = false;
  o.labs = {};
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

}  // namespace

Canary run_canary(const fs::path& cache, const GradeOptions& base, std::ostream& log) {
  log << "canary: grading @reference (every test must pass) and @stub (every test must fail) in "
         "the sandbox ...\n"
      << std::flush;
  Canary c;
  c.grader = grader_identity();
  c.machine = machine_identity();
  // The canary proves one generation of the cache (see prepare.hpp): its verdict and logs go there.
  const Cache proved = Cache::load(cache);
  const fs::path logs = proved.dir / "canary";
  c.cache = fs::weakly_canonical(proved.root).string();
  c.when = utc_now();
  try_submission("@reference", cache, logs, base, c, log);
  try_submission("@stub", cache, logs, base, c, log);
  c.passed = c.problems.empty();
  write_json(proved.dir / "canary.json", {{"passed", c.passed},
                                          {"grader", c.grader},
                                          {"machine", c.machine},
                                          {"cache", c.cache},
                                          {"when", c.when},
                                          {"problems", c.problems},
                                          {"notes", c.notes}});
  for (const std::string& n : c.notes) log << "  canary: " << n << "\n";
  for (const std::string& p : c.problems) log << "  CANARY FAILED: " << p << "\n";
  log << (c.passed ? "canary: the cache grades as it should\n"
                   : "canary: the cache does not grade as it should: nothing will be graded with "
                     "it. Fix the cause above (the logs are in " +
                         logs.string() + "), then run `workbook-grade prepare` again\n")
      << std::flush;
  return c;
}

std::string canary_problem(const fs::path& cache, const std::vector<std::string>& labs) {
  const std::string again = "; run `workbook-grade prepare --cache " + shell_quote(cache.string()) +
                            "` (it runs the canary)";
  Cache proved;
  try {
    proved = Cache::load(cache);
  } catch (const std::exception& e) {
    return e.what();
  }
  const fs::path file = proved.dir / "canary.json";
  if (!fs::exists(file))
    return "the grading cache " + cache.string() + " has not proved itself (no canary.json)" +
           again;
  const json j = read_json(file);
  // Only the labs to grade count: a lab whose reference fails does not stop the grading of others.
  std::string why;
  for (const json& p : j.value("problems", json::array())) {
    const std::string problem = p.get<std::string>();
    const bool counts = labs.empty() || std::any_of(labs.begin(), labs.end(), [&](const auto& n) {
                          return problem.rfind("lab " + n + ":", 0) == 0;
                        });
    if (counts) why += "\n  " + problem;
  }
  if (!why.empty())
    return "the grading cache " + cache.string() + " failed its canary (" +
           j.value("when", std::string("?")) + "):" + why + "\nFix the cause" + again;
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

bool prove_cache(const fs::path& cache, const GradeOptions& base, std::ostream& log) {
  if (canary_problem(cache, base.labs).empty()) return true;
  run_canary(cache, base, log);
  return canary_problem(cache, base.labs).empty();
}

}  // namespace workbook::grade
