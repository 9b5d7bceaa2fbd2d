// workbook-grade: the instructor's grader. See autograder/README.md.
#include <grade/batch.hpp>
#include <grade/gpu_access.hpp>
#include <grade/grade.hpp>
#include <grade/kit.hpp>
#include <grade/package.hpp>
#include <grade/util.hpp>
#include <grade/prepare.hpp>
#include <grade/report.hpp>
#include <grade/sandbox.hpp>
#include <grade/slurm.hpp>

#include <workbook/report.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

using namespace workbook::grade;
using nlohmann::json;

const char* kUsage = R"(usage: workbook-grade <command> [options]

  prepare   [--trusted DIR] [--cache DIR] [--labs 01,02] [--force] [--jobs N]
            Build the trusted parts once (the harness, tests, reference workers, hidden tests) and
            measure this machine's ceilings. `grade` and `batch` do it when needed.
  grade     SUBMISSION [--out DIR] [--gradescope FILE] [--prairielearn FILE] [--labs 01,02]
            [--id NAME] [--no-perf] [--perf-seconds S] [--test-timeout S] [--seed N] [--jobs N]
            [--keep-work] [--expect FILE]
            Grade one submission: a folder (a repository, or flat files), an archive (.zip, .tar,
            .tar.gz, .tgz), @reference or @stub. Writes results.json (Gradescope), prairielearn.json,
            record.json, report.md, report.html, row.csv and plots/ into --out.
  batch     SUBMISSIONS --out DIR [--jobs N] [--regrade] [grade options]
            Grade every submission of a folder, N at a time, resumable; then gradebook.csv and
            summary.{md,html} with the score distribution and a class roofline per lab.
            --slurm [--partition P] [--gpu-partition G] [--account A] [--cpus-per-task N]
            [--exclusive] [--prepared-cache] [--time MIN] [--max-parallel N] [--poll-seconds S] [--no-wait]: grade on a
            Slurm cluster instead, as job arrays (CPU labs on P, CUDA labs on G with a GPU each).
  summary   OUT   Rewrite a batch's gradebook and summary from its records.
  kit       --out DIR [--no-verify] [--verify-labs 01,03] [--force]
            Export the student repository (no solutions, hidden tests or rubrics) and verify it.
  package   gradescope --out autograder.zip | classroom --out DIR | prairielearn --out DIR
  doctor    Which isolation layers this machine allows, and what GPU access the jail would give
            (device nodes, driver libraries, toolkit) for the CUDA labs.
  labs      The labs of the prepared cache, their student files, tests and rubric warnings.

Common: --cache DIR (default: the build's grade-cache), --trusted DIR (default: this source tree).
)";

struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::vector<std::string> flags;

  bool flag(const std::string& f) const { return std::find(flags.begin(), flags.end(), f) != flags.end(); }
  std::string value(const std::string& k, const std::string& fallback = "") const {
    const auto it = values.find(k);
    return it == values.end() ? fallback : it->second;
  }
  bool has(const std::string& k) const { return values.count(k) > 0; }
};

const std::vector<std::string> kFlags = {"--force", "--no-perf", "--keep-work", "--no-verify", "--regrade", "--no-prepare",
                                         "--no-perf-lock", "--slurm", "--no-wait", "--exclusive", "--prepared-cache", "--help", "-h"};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2) return a;
  a.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string s = argv[i];
    if (s.rfind("--", 0) == 0 || s == "-h") {
      if (std::find(kFlags.begin(), kFlags.end(), s) != kFlags.end()) {
        a.flags.push_back(s);
      } else if (const auto eq = s.find('='); eq != std::string::npos) {
        a.values[s.substr(0, eq)] = s.substr(eq + 1);
      } else {
        if (i + 1 >= argc) throw std::invalid_argument(s + " needs a value");
        a.values[s] = argv[++i];
      }
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item.size() == 1 ? "0" + item : item);
  return out;
}

fs::path trusted_of(const Args& a) { return a.value("--trusted", WORKBOOK_GRADE_SOURCE_DIR); }
fs::path cache_of(const Args& a) { return fs::absolute(a.value("--cache", WORKBOOK_GRADE_DEFAULT_CACHE)); }

PrepareOptions prepare_options(const Args& a) {
  PrepareOptions p;
  p.trusted = trusted_of(a);
  p.cache = cache_of(a);
  p.labs = split_list(a.value("--labs"));
  p.force = a.flag("--force");
  p.jobs = std::stoi(a.value("--jobs", "2"));
  if (a.has("--overlay")) p.overlay = fs::absolute(a.value("--overlay"));
  return p;
}

// --- Expectations: the self-test's check of a graded result --------------------------------------------

bool meets(const std::string& want, double score, double max) {
  if (want == "any") return true;
  if (want == "full") return std::abs(score - max) < 1e-6;
  if (want == "zero") return std::abs(score) < 1e-6;
  if (want == "half") return score >= 0.5 * max - 1e-6;
  return std::abs(score - std::stod(want)) < 1e-6;
}

// `labs`: the labs graded (empty: all); expectations of the others are not checked.
int check_expectations(const GradeResult& r, const json& e, const std::vector<std::string>& labs, std::ostream& out) {
  std::vector<std::string> problems;
  for (const auto& [lab, given] : items_of(e, "labs").items()) {
    if (!labs.empty() && std::find(labs.begin(), labs.end(), lab) == labs.end()) continue;
    // A GPU lab's expectations differ where no GPU is: "without_gpu" replaces what it names.
    json expected = given;
    if (given.contains("without_gpu") && !gpu_access().present()) expected.update(given["without_gpu"]);
    const LabResult* found = nullptr;
    for (const LabResult& l : r.labs)
      if (l.number == lab) found = &l;
    if (!found) {
      problems.push_back("lab " + lab + " was not graded");
      continue;
    }
    if (expected.contains("status") && expected["status"] != found->status)
      problems.push_back("lab " + lab + ": status " + found->status + ", expected " + expected["status"].get<std::string>());
    if (expected.contains("score") && !meets(expected["score"].get<std::string>(), found->score, found->max_score))
      problems.push_back("lab " + lab + ": score " + std::to_string(found->score) + " of " + std::to_string(found->max_score) +
                         ", expected " + expected["score"].get<std::string>());
    // Per function and source: "full", "zero", "half" or "any"; "default" for the functions not named.
    std::map<std::pair<std::string, std::string>, std::pair<double, double>> sums;
    for (const Item& i : found->items)
      if (i.test != "build") {
        auto& s = sums[{i.function, to_string(i.source)}];
        s.first += i.score;
        s.second += i.max_score;
      }
    const json functions = expected.value("functions", json::object());
    const json fallback = expected.value("default", json::object());
    for (const auto& [key, sum] : sums) {
      const json& rules = functions.contains(key.first) ? functions[key.first] : fallback;
      if (!rules.contains(key.second)) continue;
      const std::string want = rules[key.second];
      if (!meets(want, sum.first, sum.second))
        problems.push_back("lab " + lab + " " + key.first + " (" + key.second + "): " + workbook::format_fixed(sum.first, 2) + " of " +
                           workbook::format_fixed(sum.second, 2) + ", expected " + want);
    }
  }
  for (const json& text : items_of(e, "output_contains")) {
    // A text about a lab that was not graded (it names the lab's folder) is not expected.
    const std::string t = text.get<std::string>();
    const std::size_t at = t.find("labs/");
    if (!labs.empty() && at != std::string::npos && t.size() >= at + 7 &&
        std::find(labs.begin(), labs.end(), t.substr(at + 5, 2)) == labs.end())
      continue;
    bool seen = false;
    for (const LabResult& l : r.labs) {
      if (l.build_output.find(t) != std::string::npos) seen = true;
      for (const Item& i : l.items)
        if (i.output.find(t) != std::string::npos) seen = true;
    }
    if (!seen) problems.push_back("no output says \"" + t + "\"");
  }
  // Texts the instructor's flags (gradebook, class summary) must contain.
  const std::vector<std::string> raised = flags(r);
  for (const json& text : items_of(e, "flags_contain")) {
    const std::string want = text.get<std::string>();
    if (std::none_of(raised.begin(), raised.end(), [&](const std::string& f) { return f.find(want) != std::string::npos; }))
      problems.push_back("no flag says \"" + want + "\"");
  }
  if (e.contains("total") && !meets(e["total"].get<std::string>(), r.score, r.max_score))
    problems.push_back("total " + std::to_string(r.score) + " of " + std::to_string(r.max_score) + ", expected " + e["total"].get<std::string>());
  for (const std::string& p : problems) out << "EXPECTATION NOT MET: " << p << "\n";
  if (problems.empty()) out << "every expectation met\n";
  return problems.empty() ? 0 : 1;
}

int cmd_grade(const Args& a) {
  if (a.positional.size() != 1) throw std::invalid_argument("grade needs one SUBMISSION");
  GradeOptions o;
  o.submission = a.positional[0];
  if (o.submission.string()[0] != '@') o.submission = fs::absolute(o.submission);
  o.cache = cache_of(a);
  o.out = a.has("--out") ? fs::absolute(a.value("--out")) : fs::path();
  o.work = a.has("--work") ? fs::absolute(a.value("--work")) : fs::path();
  o.id = a.value("--id");
  o.labs = split_list(a.value("--labs"));
  o.slot = std::stoi(a.value("--slot", "0"));
  o.jobs = std::stoi(a.value("--jobs", "2"));
  o.perf = !a.flag("--no-perf");
  o.perf_lock = !a.flag("--no-perf-lock");
  if (a.has("--perf-seconds")) o.perf_seconds = std::stod(a.value("--perf-seconds"));
  if (a.has("--perf-full-within")) o.perf_full_within = std::stod(a.value("--perf-full-within"));
  if (a.has("--perf-zero-at")) o.perf_zero_at = std::stod(a.value("--perf-zero-at"));
  if (a.has("--test-timeout")) o.test_timeout = std::stod(a.value("--test-timeout"));
  if (a.has("--seed")) o.seed = std::stoull(a.value("--seed"));
  o.keep_work = a.flag("--keep-work");
  o.gradescope = a.value("--gradescope");
  o.prairielearn = a.value("--prairielearn");
  if (o.out.empty() && o.gradescope.empty() && o.prairielearn.empty()) o.out = fs::absolute("grade-results");
  if (!a.flag("--no-prepare")) prepare(prepare_options(a), std::cerr);
  const GradeResult r = grade(o, std::cerr);
  std::cout << r.id << ": " << workbook::format_fixed(r.score, 2) << " / " << workbook::format_fixed(r.max_score, 2) << "\n";
  if (a.has("--expect")) return check_expectations(r, read_json(a.value("--expect")), o.labs, std::cout);
  // A lab that could not be graded here is the instructor's to know: the results say so, and so
  // does the exit code (the submission itself is graded as far as it could be).
  int ungraded = 0;
  for (const LabResult& l : r.labs) {
    if (l.status != "unavailable" && l.status != "not_graded") continue;
    ++ungraded;
    std::cerr << "workbook-grade: lab " << l.number << " was not graded on this machine: "
              << (l.notes.empty() ? l.status : first_errors(l.notes.front(), 5));
    if (l.notes.empty() || l.notes.front().back() != '\n') std::cerr << "\n";
  }
  return ungraded == 0 ? 0 : kExitLabsNotGraded;
}

int cmd_batch(const Args& a) {
  if (a.positional.size() != 1 || !a.has("--out")) throw std::invalid_argument("batch needs SUBMISSIONS and --out DIR");
  BatchOptions o;
  o.submissions = fs::absolute(a.positional[0]);
  o.out = fs::absolute(a.value("--out"));
  o.cache = cache_of(a);
  o.work = a.has("--work") ? fs::absolute(a.value("--work")) : fs::path();
  o.jobs = std::stoi(a.value("--jobs", "1"));
  o.labs = split_list(a.value("--labs"));
  o.regrade = a.flag("--regrade");
  for (const char* f : {"--no-perf"})
    if (a.flag(f)) o.grade_arguments.push_back(f);
  for (const char* k : {"--perf-seconds", "--perf-full-within", "--perf-zero-at", "--test-timeout", "--seed", "--labs"})
    if (a.has(k)) {
      o.grade_arguments.push_back(k);
      o.grade_arguments.push_back(a.value(k));
    }
  if (a.flag("--slurm")) {
    // The tasks prepare their node type's cache themselves: nothing is built on this machine.
    SlurmOptions s;
    s.trusted = trusted_of(a);
    s.partition = a.value("--partition");
    s.gpu_partition = a.value("--gpu-partition");
    s.account = a.value("--account");
    s.cpus_per_task = std::stoi(a.value("--cpus-per-task", "2"));
    s.exclusive = a.flag("--exclusive");
    s.prepared_cache = a.flag("--prepared-cache");
    s.time_minutes = std::stoi(a.value("--time", "60"));
    s.max_parallel = std::stoi(a.value("--max-parallel", "0"));
    s.poll_seconds = std::stod(a.value("--poll-seconds", "10"));
    s.wait = !a.flag("--no-wait");
    const int result = batch_slurm(o, s, std::cerr);
    return result == 0 || result == kExitLabsNotGraded ? result : 1;
  }
  if (!a.flag("--no-prepare")) prepare(prepare_options(a), std::cerr);
  const int result = batch(o, std::cerr);
  return result == 0 || result == kExitLabsNotGraded ? result : 1;
}

int cmd_labs(const Args& a) {
  const Cache cache = Cache::load(cache_of(a));
  for (const auto& [n, lab] : cache.labs) {
    std::cout << lab.name() << " (" << lab.folder << "): " << (lab.available ? "ready" : "NOT AVAILABLE: " + lab.unavailable) << "\n";
    if (!lab.available) continue;
    const Rubric rubric = cache.rubric(lab);
    std::cout << "  rubric: " << (rubric.path.empty() ? "default (no rubric.json)" : rubric.path) << "\n  student files:";
    for (const std::string& f : lab.student_files) std::cout << " labs/" << lab.folder << "/" << f;
    double total = 0;
    for (const auto& [source, tests] : {std::pair{Source::visible, lab.visible_tests}, {Source::hidden, lab.hidden_tests},
                                        {Source::perf, lab.perf_cases}})
      for (const std::string& t : tests)
        if (const Rule* r = rubric.find(source, t)) total += r->points;
    std::cout << "\n  " << lab.visible_tests.size() << " visible, " << lab.hidden_tests.size() << " hidden tests, "
              << lab.perf_cases.size() << " perf cases; " << workbook::format_fixed(total, 1) << " points\n";
    for (const std::string& w : lab.rubric_warnings) std::cout << "  rubric warning: " << w << "\n";
  }
  return 0;
}

int cmd_package(const Args& a) {
  if (a.positional.empty() || !a.has("--out")) throw std::invalid_argument("package gradescope|classroom|prairielearn --out PATH");
  const std::string what = a.positional[0];
  const fs::path out = fs::absolute(a.value("--out"));
  if (what == "gradescope") {
    package_gradescope(trusted_of(a), out, std::cerr);
  } else if (what == "classroom") {
    std::unique_ptr<Cache> cache;
    try {
      cache = std::make_unique<Cache>(Cache::load(cache_of(a)));
    } catch (const std::exception&) {
      std::cerr << "(no prepared cache: every lab counts 10 points; run `workbook-grade prepare` for the rubrics' points)\n";
    }
    write_text_atomic(out / ".github" / "workflows" / "classroom.yml", classroom_workflow(trusted_of(a), cache.get()));
    std::cerr << "wrote " << (out / ".github" / "workflows" / "classroom.yml").string() << "\n";
  } else if (what == "prairielearn") {
    package_prairielearn(trusted_of(a), out, std::cerr);
  } else {
    throw std::invalid_argument("package what? gradescope, classroom or prairielearn");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    if (a.command.empty() || a.command == "--help" || a.command == "-h" || a.command == "help" || a.flag("--help")) {
      std::cout << kUsage;
      return a.command.empty() ? 2 : 0;
    }
    if (a.command == "sandbox-exec") {
      std::vector<std::string> rest(argv + 2, argv + argc);
      return sandbox_exec(rest);
    }
    if (a.command == "prepare") {
      const Cache c = prepare(prepare_options(a), std::cerr);
      int unavailable = 0;
      for (const auto& [n, lab] : c.labs) unavailable += !lab.available;
      return unavailable == 0 ? 0 : 1;
    }
    if (a.command == "grade") return cmd_grade(a);
    if (a.command == "batch") return cmd_batch(a);
    if (a.command == "summary") {
      if (a.positional.size() != 1) throw std::invalid_argument("summary OUT");
      write_summary(fs::absolute(a.positional[0]), std::cerr);
      return 0;
    }
    if (a.command == "kit") {
      if (!a.has("--out")) throw std::invalid_argument("kit --out DIR");
      KitOptions k;
      k.trusted = trusted_of(a);
      k.out = fs::absolute(a.value("--out"));
      k.cache = cache_of(a);
      k.force = a.flag("--force");
      k.verify = !a.flag("--no-verify");
      k.verify_labs = split_list(a.value("--verify-labs"));
      k.jobs = std::stoi(a.value("--jobs", "2"));
      if (a.has("--perf-seconds")) k.perf_seconds = std::stod(a.value("--perf-seconds"));
      return export_kit(k, std::cerr);
    }
    if (a.command == "package") return cmd_package(a);
    if (a.command == "doctor") {
      // What isolates student code here, and what a CUDA program would get in the jail.
      json report = isolation().to_json();
      report["gpu"] = gpu_access().to_json();
      std::cout << report.dump(2) << "\n";
      return isolation().complete() ? 0 : 1;
    }
    if (a.command == "labs") return cmd_labs(a);
    std::cerr << "unknown command '" << a.command << "'\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "workbook-grade: " << e.what() << "\n";
    return 2;
  }
}
