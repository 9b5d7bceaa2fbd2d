// workbook-grade: the instructor's grader. See autograder/README.md.
#include <grade/archive.hpp>
#include <grade/batch.hpp>
#include <grade/canary.hpp>
#include <grade/gpu_access.hpp>
#include <grade/grade.hpp>
#include <grade/kit.hpp>
#include <grade/package.hpp>
#include <grade/prepare.hpp>
#include <grade/report.hpp>
#include <grade/sandbox.hpp>
#include <grade/slurm.hpp>
#include <grade/util.hpp>

#include <workbook/internal/command_line.hpp>
#include <workbook/report.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

using namespace workbook::grade;
using nlohmann::json;

// Each command's options, bound by CLI11: an unknown option or a stray argument is an error (exit
// 2) rather than a setting silently ignored.
struct Options {
  std::string trusted = WORKBOOK_GRADE_SOURCE_DIR;
  std::string cache = WORKBOOK_GRADE_DEFAULT_CACHE;
  std::string labs, overlay, out, work, expect, verify_labs, submission, what, only;
  std::optional<int> jobs;  // absent: each command's own default
  bool force = false, allow_dirty = false, no_prepare = false, regrade = false, no_verify = false,
       no_perf = false, no_perf_lock = false, allow_slow_reference = false;
  GradeOptions grade;      // grade's own settings, bound directly
  SummaryOptions summary;  // batch's and summary's
  bool slurm = false;      // batch --slurm
  SlurmOptions cluster;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item.size() == 1 ? "0" + item : item);
  return out;
}

// Every folder the grader compares, writes or binds into the jail, by its real path: a cache or
// build folder reached through a symlink (clusters put scratch and home folders behind them) is
// bound where the sandboxed compiler looks for it.
fs::path real_path(const fs::path& p) {
  return fs::weakly_canonical(fs::absolute(p));
}
fs::path trusted_of(const Options& a) {
  return real_path(a.trusted);
}
fs::path cache_of(const Options& a) {
  return real_path(a.cache);
}

// The instructor's umask, before main() set the grader's own (see main()).
mode_t instructor_umask = 022;

// A folder of results (students' scores and reports), made as private as the instructor's umask
// asks: the files in it are written under the grader's umask, the folder keeps others out. A
// folder that exists keeps the permissions it has.
fs::path results_folder(const fs::path& folder) {
  const fs::path real = real_path(folder);
  if (fs::create_directories(real))
    fs::permissions(real, static_cast<fs::perms>(0777 & ~instructor_umask),
                    fs::perm_options::replace);
  return real;
}

GradeOptions canary_options(const Options& a);

PrepareOptions prepare_options(const Options& a) {
  PrepareOptions p;
  // A new generation of the cache proves itself before grades get it (see canary.hpp).
  p.prove = [canary = canary_options(a)](const fs::path& generation) {
    GradeOptions o = canary;
    o.cache = generation;
    run_canary(generation, o, std::cerr);
  };
  p.trusted = trusted_of(a);
  p.cache = cache_of(a);
  p.labs = split_list(a.labs);
  p.force = a.force;
  p.allow_dirty = a.allow_dirty;
  p.jobs = a.jobs.value_or(2);
  if (!a.overlay.empty()) p.overlay = real_path(a.overlay);
  return p;
}

void add_cache(CLI::App* c, Options& a) {
  c->add_option("--cache", a.cache, "the prepared grading cache")->capture_default_str();
}
void add_trusted(CLI::App* c, Options& a) {
  c->add_option("--trusted", a.trusted, "the instructor's tree (solutions/, autograder/)")
      ->capture_default_str();
}
void add_allow_dirty(CLI::App* c, Options& a) {
  c->add_flag("--allow-dirty", a.allow_dirty,
              "use the trusted tree's files as they are, where they differ from its last commit "
              "(default: refuse, naming them)");
}
// The options of `prepare`, which `grade` and `batch` run first unless --no-prepare.
void add_prepare(CLI::App* c, Options& a, const std::string& jobs_help) {
  add_trusted(c, a);
  add_cache(c, a);
  c->add_option("--labs", a.labs, "the labs, by number (01,02); default: every lab");
  c->add_flag("--force", a.force, "prepare again even when the cache is up to date");
  add_allow_dirty(c, a);
  c->add_option("--jobs", a.jobs, jobs_help);
  c->add_option("--overlay", a.overlay,
                "a folder laid over the trusted tree (the self-test's extra lab)");
}
// The class summary's settings, of `batch` and `summary`.
void add_summary(CLI::App* c, Options& a) {
  c->add_option("--similarity-threshold", a.summary.similarity_threshold,
                "list pairs where at least this % of a submission's own code (the handout's "
                "left out) is found in the other (default 60)")
      ->check(CLI::Range(0.0, 100.0));
  c->add_flag(
      "--no-similarity", [&a](std::int64_t) { a.summary.similarity = false; },
      "leave the similarity check (sim_c++) out of the summary");
}
void add_no_prepare(CLI::App* c, Options& a) {
  c->add_flag("--no-prepare", a.no_prepare,
              "use the cache as it is, without checking that it is up to date");
}
// The grading settings `batch` passes on to each `grade`.
void add_grading(CLI::App* c, Options& a) {
  GradeOptions& g = a.grade;
  c->add_option("--work", a.work,
                "where workspaces are made (default: a folder in the system's temporary folder)");
  c->add_flag("--no-perf", a.no_perf, "grade correctness only, no timing");
  c->add_option("--perf-seconds", g.perf_seconds,
                "timing budget of one perf comparison (default: the rubric's)");
  c->add_option("--perf-full-within", g.perf_full_within,
                "full perf points within this ratio to the reference (default: the rubric's)");
  c->add_option("--perf-zero-at", g.perf_zero_at,
                "no perf points from this ratio to the reference (default: the rubric's)");
  c->add_option("--test-timeout", g.test_timeout,
                "seconds per test process (default: the rubric's)");
  c->add_option("--seed", g.seed, "the tests' random seed (default: a fresh one, recorded)");
  // The grade's cgroup and work folder (as root; `doctor` says whether this machine has them).
  c->add_option_function<std::uint64_t>(
       "--grade-memory-mib", [&g](std::uint64_t v) { g.limits.memory_bytes = v << 20; },
       "memory of a whole grade, every process together (default 8192)")
      ->check(CLI::PositiveNumber);
  c->add_option("--grade-processes", g.limits.processes,
                "processes and threads of a whole grade at once (default 512)")
      ->check(CLI::PositiveNumber);
  c->add_option("--grade-cpus", g.limits.cpus,
                "CPUs a whole grade may keep busy (default: the CPUs the grader may run on)")
      ->check(CLI::PositiveNumber);
  c->add_option_function<std::uint64_t>(
       "--work-mib", [&g](std::uint64_t v) { g.limits.work_bytes = v << 20; },
       "size of a grade's work folder (a tmpfs; default 1024)")
      ->check(CLI::PositiveNumber);
}

// --- Expectations: the self-test's check of a graded result
// --------------------------------------------

bool meets(const std::string& want, double score, double max) {
  if (want == "any") return true;
  if (want == "full") return std::abs(score - max) < 1e-6;
  if (want == "zero") return std::abs(score) < 1e-6;
  if (want == "half") return score >= 0.5 * max - 1e-6;
  return std::abs(score - std::stod(want)) < 1e-6;
}

// `labs`: the labs graded (empty: all); expectations of the others are not checked.
int check_expectations(const GradeResult& r, const json& e, const std::vector<std::string>& labs,
                       std::ostream& out) {
  std::vector<std::string> problems;
  for (const auto& [lab, given] : items_of(e, "labs").items()) {
    if (!labs.empty() && std::find(labs.begin(), labs.end(), lab) == labs.end()) continue;
    // A GPU lab's expectations differ where no GPU is: "without_gpu" replaces what it names.
    json expected = given;
    if (given.contains("without_gpu") && !gpu_access().present())
      expected.update(given["without_gpu"]);
    const LabResult* found = nullptr;
    for (const LabResult& l : r.labs)
      if (l.number == lab) found = &l;
    if (!found) {
      problems.push_back("lab " + lab + " was not graded");
      continue;
    }
    if (expected.contains("status") && expected["status"] != to_string(found->status))
      problems.push_back("lab " + lab + ": status " + to_string(found->status) + ", expected " +
                         expected["status"].get<std::string>());
    if (expected.contains("score") &&
        !meets(expected["score"].get<std::string>(), found->score, found->max_score))
      problems.push_back("lab " + lab + ": score " + std::to_string(found->score) + " of " +
                         std::to_string(found->max_score) + ", expected " +
                         expected["score"].get<std::string>());
    // Per function and source: "full", "zero", "half" or "any"; "default" for the functions not
    // named.
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
        problems.push_back("lab " + lab + " " + key.first + " (" + key.second +
                           "): " + workbook::format_fixed(sum.first, 2) + " of " +
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
    if (std::none_of(raised.begin(), raised.end(),
                     [&](const std::string& f) { return f.find(want) != std::string::npos; }))
      problems.push_back("no flag says \"" + want + "\"");
  }
  for (const json& text : items_of(e, "flags_absent")) {
    const std::string unwanted = text.get<std::string>();
    for (const std::string& f : raised)
      if (f.find(unwanted) != std::string::npos)
        problems.push_back("a flag says \"" + unwanted + "\": " + f);
  }
  // What a student's process printed stays text in every output a platform renders: in the
  // Markdown ones (report.md, Gradescope's), "markdown_not_contains" may not appear outside their
  // code blocks (where Markdown shows text as it is); in the plain-text ones (PrairieLearn's),
  // outside the indented lines that quote it. "outputs_not_contain" appears nowhere in them.
  std::vector<std::string> markdown = {markdown_report(r),
                                       gradescope_results(r).value("output", "")};
  for (const json& t : items_of(gradescope_results(r), "tests"))
    markdown.push_back(t.value("output", ""));
  const json prairielearn = prairielearn_results(r);
  std::vector<std::string> plain = {prairielearn.value("output", "")};
  for (const json& t : items_of(prairielearn, "tests")) plain.push_back(t.value("output", ""));
  auto outside_code = [](const std::string& md) {
    std::string out;
    bool code = false;
    std::istringstream in(md);
    for (std::string line; std::getline(in, line);) {
      const std::size_t lead = line.find_first_not_of(' ');
      if (lead != std::string::npos && line.compare(lead, 3, "```") == 0) {
        code = !code;
        continue;
      }
      if (!code) out += "\n" + line;
    }
    return out;
  };
  auto unindented = [](const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("    ", 0) != 0) out += "\n" + line;
    return out;
  };
  for (const auto& [key, anywhere] :
       {std::pair{"markdown_not_contains", false}, std::pair{"outputs_not_contain", true}}) {
    for (const json& text : items_of(e, key)) {
      const std::string unwanted = text.get<std::string>();
      if (std::any_of(markdown.begin(), markdown.end(), [&](const std::string& m) {
            return (anywhere ? m : outside_code(m)).find(unwanted) != std::string::npos;
          }))
        problems.push_back("a Markdown output contains " + json(valid_text(unwanted)).dump() +
                           (anywhere ? "" : " outside its code blocks"));
      if (std::any_of(plain.begin(), plain.end(), [&](const std::string& t) {
            return (anywhere ? t : unindented(t)).find(unwanted) != std::string::npos;
          }))
        problems.push_back("a plain-text output (PrairieLearn's) contains " +
                           json(valid_text(unwanted)).dump() +
                           (anywhere ? "" : " outside its indented, quoted lines"));
    }
  }
  if (e.contains("max_seconds") && r.seconds > e["max_seconds"].get<double>())
    problems.push_back("the grade took " + workbook::format_fixed(r.seconds, 0) + " s, more than " +
                       workbook::format_fixed(e["max_seconds"].get<double>(), 0));
  if (e.contains("total") && !meets(e["total"].get<std::string>(), r.score, r.max_score))
    problems.push_back("total " + std::to_string(r.score) + " of " + std::to_string(r.max_score) +
                       ", expected " + e["total"].get<std::string>());
  for (const std::string& p : problems) out << "EXPECTATION NOT MET: " << p << "\n";
  if (problems.empty()) out << "every expectation met\n";
  return problems.empty() ? 0 : 1;
}

// The grading settings the canary runs with: the cache, work folder and labs of the command.
GradeOptions canary_options(const Options& a) {
  GradeOptions o = a.grade;
  o.cache = cache_of(a);
  o.work = a.work.empty() ? fs::path() : real_path(a.work);
  o.labs = split_list(a.labs);
  return o;
}

// Whether the cache has proved itself for the labs of `o` (its canary; see canary.hpp): after a
// prepare, the canary runs unless it stands; with --no-prepare, the one recorded must stand.
bool proved(const Options& a, const GradeOptions& o) {
  if (!a.no_prepare && prove_cache(o.cache, o, std::cerr)) return true;
  const std::string problem = canary_problem(o.cache, o.labs);
  if (problem.empty()) return true;
  std::cerr << "workbook-grade: nothing graded: " << problem << "\n";
  return false;
}

int cmd_grade(Options& a) {
  GradeOptions& o = a.grade;
  o.submission = a.submission;
  if (o.submission.string()[0] != '@') o.submission = real_path(o.submission);
  o.cache = cache_of(a);
  o.out = a.out.empty() ? fs::path() : results_folder(a.out);
  o.work = a.work.empty() ? fs::path() : real_path(a.work);
  o.labs = split_list(a.labs);
  o.jobs = a.jobs.value_or(2);
  o.perf = !a.no_perf;
  o.perf_lock = !a.no_perf_lock;
  if (o.out.empty() && o.gradescope.empty() && o.prairielearn.empty())
    o.out = results_folder("grade-results");
  if (!a.no_prepare) prepare(prepare_options(a), std::cerr);
  if (!proved(a, o)) return 2;
  const GradeResult r = grade(o, std::cerr);
  std::cout << r.id << ": " << workbook::format_fixed(r.score, 2) << " / "
            << workbook::format_fixed(r.max_score, 2) << "\n";
  if (!a.expect.empty()) return check_expectations(r, read_json(a.expect), o.labs, std::cout);
  // A lab that could not be graded here is the instructor's to know: the results say so, and so
  // does the exit code (the submission itself is graded as far as it could be).
  int ungraded = 0;
  for (const LabResult& l : r.labs) {
    if (l.status != LabStatus::unavailable && l.status != LabStatus::not_graded &&
        l.status != LabStatus::environment_error)
      continue;
    ++ungraded;
    std::cerr << "workbook-grade: lab " << l.number << " was not graded on this machine: "
              << (l.notes.empty() ? std::string(to_string(l.status))
                                  : first_errors(l.notes.front(), 5));
    if (l.notes.empty() || l.notes.front().back() != '\n') std::cerr << "\n";
  }
  return ungraded == 0 ? 0 : kExitLabsNotGraded;
}

int cmd_batch(const Options& a, const CLI::App& command) {
  BatchOptions o;
  o.submissions = real_path(a.submission);
  o.out = results_folder(a.out);
  o.cache = cache_of(a);
  o.work = a.work.empty() ? fs::path() : real_path(a.work);
  o.jobs = a.jobs.value_or(1);
  o.labs = split_list(a.labs);
  o.regrade = a.regrade;
  o.summary = a.summary;
  o.summary.cache = cache_of(a);
  o.summary.trusted = trusted_of(a);
  {
    std::stringstream ids(a.only);
    for (std::string id; std::getline(ids, id, ',');)
      if (!id.empty()) o.only.push_back(id);
  }
  // Each submission's `grade` gets the grading options as they were written.
  for (const char* k : {"--no-perf", "--perf-seconds", "--perf-full-within", "--perf-zero-at",
                        "--test-timeout", "--seed", "--labs", "--grade-memory-mib",
                        "--grade-processes", "--grade-cpus", "--work-mib", "--allow-dirty"}) {
    const CLI::Option* option = command.get_option(k);
    if (option->count() == 0) continue;
    o.grade_arguments.push_back(k);
    if (option->get_expected_min() > 0) o.grade_arguments.push_back(option->results().back());
  }
  if (a.slurm) {
    // The tasks prepare their node type's cache themselves: nothing is built on this machine.
    SlurmOptions s = a.cluster;
    s.trusted = trusted_of(a);
    const int result = batch_slurm(o, s, std::cerr);
    return result == 0 || result == kExitLabsNotGraded ? result : 1;
  }
  if (!a.no_prepare) prepare(prepare_options(a), std::cerr);
  if (!proved(a, canary_options(a))) return 2;
  // The whole class is graded with the generation of the cache current now, held until the end
  // (a re-prepare meanwhile makes another; see prepare.hpp).
  const CacheInUse pinned(o.cache);
  o.cache = pinned.cache().dir;
  const int result = batch(o, std::cerr);
  return result == 0 || result == kExitLabsNotGraded ? result : 1;
}

int cmd_labs(const Options& a) {
  const Cache cache = Cache::load(cache_of(a));
  for (const auto& [n, lab] : cache.labs) {
    std::cout << lab.name() << " (" << lab.folder
              << "): " << (lab.available ? "ready" : "NOT AVAILABLE: " + lab.unavailable) << "\n";
    if (!lab.available) continue;
    const Rubric rubric = cache.rubric(lab);
    std::cout << "  rubric: " << (rubric.path.empty() ? "default (no rubric.json)" : rubric.path)
              << "\n  student files:";
    for (const std::string& f : lab.student_files) std::cout << " labs/" << lab.folder << "/" << f;
    double total = 0;
    for (const auto& [source, tests] : {std::pair{Source::visible, lab.visible_tests},
                                        {Source::hidden, lab.hidden_tests},
                                        {Source::perf, lab.perf_cases}})
      for (const std::string& t : tests)
        if (const Rule* r = rubric.find(source, t)) total += r->points;
    std::cout << "\n  " << lab.visible_tests.size() << " visible, " << lab.hidden_tests.size()
              << " hidden tests, " << lab.perf_cases.size() << " perf cases; "
              << workbook::format_fixed(total, 1) << " points\n";
    for (const std::string& w : lab.rubric_warnings) std::cout << "  rubric warning: " << w << "\n";
  }
  return 0;
}

int cmd_package(const Options& a) {
  // The package carries the trusted tree (solutions, rubrics, hidden tests): as committed.
  if (a.what != "classroom") require_committed(trusted_of(a), a.allow_dirty, "the package");
  const fs::path out = real_path(a.out);
  if (a.what == "gradescope") {
    package_gradescope(trusted_of(a), out, std::cerr, split_list(a.labs));
  } else if (a.what == "classroom") {
    std::unique_ptr<Cache> cache;
    try {
      cache = std::make_unique<Cache>(Cache::load(cache_of(a)));
    } catch (const std::exception&) {
      std::cerr << "(no prepared cache: every lab counts 10 points; run `workbook-grade prepare` "
                   "for the rubrics' points)\n";
    }
    write_text_atomic(out / ".github" / "workflows" / "classroom.yml",
                      classroom_workflow(trusted_of(a), cache.get()));
    std::cerr << "wrote " << (out / ".github" / "workflows" / "classroom.yml").string() << "\n";
  } else {
    package_prairielearn(trusted_of(a), out, std::cerr, split_list(a.labs));
  }
  return 0;
}

int cmd_kit(const Options& a) {
  KitOptions k;
  k.trusted = trusted_of(a);
  k.out = real_path(a.out);
  k.cache = cache_of(a);
  k.force = a.force;
  k.allow_dirty = a.allow_dirty;
  k.verify = !a.no_verify;
  k.verify_labs = split_list(a.verify_labs);
  k.jobs = a.jobs.value_or(2);
  if (a.grade.perf_seconds) k.perf_seconds = *a.grade.perf_seconds;
  k.allow_slow_reference = a.allow_slow_reference;
  return export_kit(k, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  // The grader's own files (the cache, each grade's work folder) are read by the sandbox's user:
  // under an instructor's umask of 077 they would be owner-only, and every student's build would
  // fail for the grader's fault. Folders of results keep the instructor's umask (results_folder).
  instructor_umask = umask(022);
  Options a;
  GradeOptions& g = a.grade;
  CLI::App app{
      "The instructor's grader: prepares the trusted build, grades submissions (one, or a class in "
      "a batch), "
      "exports the student kit and packages the grader for Gradescope, GitHub Classroom and "
      "PrairieLearn. "
      "See autograder/README.md.",
      "workbook-grade"};
  app.require_subcommand(1);
  // An option given twice takes its last value, as scripts that add to a common list expect.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.footer("`workbook-grade COMMAND --help` lists a command's options.");

  CLI::App* prepare_command =
      app.add_subcommand("prepare",
                         "Build the trusted parts once (the harness, tests, reference workers, "
                         "hidden tests) and measure this "
                         "machine's ceilings, then prove the cache (the canary: @reference gets "
                         "every point and @stub none, in the sandbox). `grade` and `batch` do it "
                         "when needed, and refuse a cache that has not proved itself. Exit 1 if a "
                         "lab could not be prepared or the canary failed.");
  add_prepare(prepare_command, a, "parallel build jobs (default 2)");

  CLI::App* grade_command =
      app.add_subcommand("grade",
                         "Grade one submission. Writes results.json (Gradescope), "
                         "prairielearn.json, record.json, report.md, "
                         "report.html, row.csv and plots/ into --out. Exit 3 if a lab could not be "
                         "graded on this machine; "
                         "with --expect, 1 if an expectation is not met.");
  grade_command
      ->add_option(
          "submission", a.submission,
          "a folder (a repository, or flat files), an archive (.zip, .tar, .tar.gz, .tgz, .tar.xz, "
          ".tar.bz2), @reference or @stub")
      ->required();
  add_prepare(grade_command, a,
              "visible tests run in parallel, and parallel build jobs of the prepare (default 2)");
  add_no_prepare(grade_command, a);
  add_grading(grade_command, a);
  grade_command->add_option(
      "--out", a.out,
      "the outputs' folder (default: ./grade-results, unless --gradescope or --prairielearn)");
  grade_command->add_option("--gradescope", g.gradescope,
                            "write Gradescope's results.json here too");
  grade_command->add_option("--prairielearn", g.prairielearn,
                            "write PrairieLearn's results.json here too");
  grade_command->add_option(
      "--id", g.id, "the submission's name in the gradebook (default: its file or folder name)");
  grade_command->add_option("--slot", g.slot, "sandbox user slot (batch jobs use 0..N-1)")
      ->capture_default_str();
  grade_command->add_flag("--no-perf-lock", a.no_perf_lock,
                          "time kernels even while other grading jobs run (no machine-wide lock)");
  grade_command->add_flag("--keep-work", g.keep_work,
                          "keep the workspace (for debugging the grader)");
  grade_command->add_option("--expect", a.expect,
                            "check the result against an expected.json (the self-test)");

  CLI::App* batch_command =
      app.add_subcommand("batch",
                         "Grade every submission of a folder, N at a time, resumable; then "
                         "gradebook.csv and summary.{md,html} "
                         "with the score distribution and a class roofline per lab. Exit 3 if a "
                         "lab could not be graded.");
  batch_command
      ->add_option("submissions", a.submission,
                   "a folder: each entry (a folder or an archive) is one submission")
      ->required();
  batch_command
      ->add_option("--out", a.out, "the batch's folder (submissions/, gradebook.csv, summary.*)")
      ->required();
  add_prepare(batch_command, a,
              "submissions graded at once (default 1; the prepare's build jobs: default 2)");
  add_no_prepare(batch_command, a);
  add_grading(batch_command, a);
  add_summary(batch_command, a);
  batch_command->add_flag("--regrade", a.regrade,
                          "grade again even the submissions already graded");
  batch_command
      ->add_option("--only", a.only,
                   "grade again these submissions only (ids, as in the gradebook: ana,ben), "
                   "then rewrite the gradebook and summary with every result")
      ->excludes("--regrade");
  // On a Slurm cluster (slurm.hpp; the guide's "Grading on a cluster").
  SlurmOptions& cl = a.cluster;
  const std::string slurm_group = "On a Slurm cluster (with --slurm)";
  batch_command
      ->add_flag("--slurm", a.slurm, "grade as Slurm job arrays instead of on this machine")
      ->group(slurm_group);
  batch_command
      ->add_option("--partition", cl.partition, "the CPU labs' partition (default: the cluster's)")
      ->group(slurm_group);
  batch_command
      ->add_option("--gpu-partition", cl.gpu_partition, "the CUDA labs' partition (a GPU per task)")
      ->group(slurm_group);
  batch_command->add_option("--account", cl.account, "the account the tasks are charged to")
      ->group(slurm_group);
  batch_command
      ->add_option("--cpus-per-task", cl.cpus_per_task, "whole cores per task, bound (default 2)")
      ->check(CLI::PositiveNumber)
      ->group(slurm_group);
  batch_command->add_flag("--exclusive", cl.exclusive, "a whole node per task")->group(slurm_group);
  batch_command
      ->add_flag(
          "--prepared-cache", cl.prepared_cache,
          "--cache is prepared already for these nodes: use it as it is (default: each node type "
          "prepares its own, on first use)")
      ->group(slurm_group);
  batch_command
      ->add_option("--time", cl.time_minutes, "each task's time limit, minutes (default 60)")
      ->check(CLI::PositiveNumber)
      ->group(slurm_group);
  batch_command
      ->add_option("--max-parallel", cl.max_parallel, "at most this many tasks of an array at once")
      ->check(CLI::NonNegativeNumber)
      ->group(slurm_group);
  batch_command
      ->add_option("--poll-seconds", cl.poll_seconds, "how often the queue is read (default 10)")
      ->check(CLI::PositiveNumber)
      ->group(slurm_group);
  batch_command
      ->add_flag(
          "--no-wait", [&cl](std::int64_t) { cl.wait = false; },
          "submit and return; run the same command again to collect")
      ->group(slurm_group);
  for (const char* option :
       {"--partition", "--gpu-partition", "--account", "--cpus-per-task", "--exclusive",
        "--prepared-cache", "--time", "--max-parallel", "--poll-seconds", "--no-wait"})
    batch_command->get_option(option)->needs("--slurm");

  CLI::App* summary_command = app.add_subcommand(
      "summary",
      "Rewrite a batch's gradebook and summary from its records, nothing run again: anomalies, "
      "similar submissions, leaderboards. --rescore scores every record again under the rubrics "
      "of the prepared cache (points, weights, gates, perf tiers) and names the changes that need "
      "a re-grade instead (new tests or perf cases, limits, timing budgets).");
  summary_command->add_option("out", a.out, "the batch's folder (its --out)")->required();
  add_cache(summary_command, a);
  add_trusted(summary_command, a);
  add_summary(summary_command, a);
  summary_command->add_flag("--rescore", a.summary.rescore,
                            "score every record again under the cache's rubrics, and rewrite "
                            "each submission's results and reports");

  CLI::App* kit_command = app.add_subcommand("kit",
                                             "Export the student repository (no solutions, hidden "
                                             "tests or rubrics) and verify it. Exit non-zero if "
                                             "the verification fails.");
  kit_command->add_option("--out", a.out, "the kit's folder (must not exist, unless --force)")
      ->required();
  add_trusted(kit_command, a);
  add_cache(kit_command, a);
  kit_command->add_flag("--force", a.force, "replace an existing --out");
  kit_command->add_flag("--no-verify", a.no_verify, "export only, without checking the kit");
  add_allow_dirty(kit_command, a);
  kit_command->add_option(
      "--verify-labs", a.verify_labs,
      "the labs whose build, stubs and perf feedback are checked (default: all)");
  kit_command->add_option("--jobs", a.jobs, "parallel build jobs (default 2)");
  kit_command->add_option("--perf-seconds", g.perf_seconds,
                          "timing budget of the perf-feedback check (default 0.5)");
  kit_command->add_flag("--allow-slow-reference", a.allow_slow_reference,
                        "a reference slower here than its profile is a warning, not a kit that "
                        "is not ready (this machine is not the students' kind, or is shared)");

  CLI::App* package_command =
      app.add_subcommand("package",
                         "Package the grader: gradescope --out autograder.zip | classroom --out "
                         "DIR | prairielearn --out DIR.");
  package_command->add_option("what", a.what, "gradescope, classroom or prairielearn")
      ->required()
      ->check(CLI::IsMember({"gradescope", "classroom", "prairielearn"}));
  package_command
      ->add_option("--out", a.out,
                   "the zip (gradescope) or folder (classroom, prairielearn) to write")
      ->required();
  add_trusted(package_command, a);
  add_cache(package_command, a);
  package_command->add_option("--labs", a.labs,
                              "grade only these labs (01,02): an assignment of its own, scored "
                              "over their points (default: every lab)");
  add_allow_dirty(package_command, a);

  CLI::App* doctor_command = app.add_subcommand(
      "doctor",
      "Which isolation layers this machine allows, and what GPU access the jail would give (device "
      "nodes, "
      "driver libraries, toolkit) for the CUDA labs. Exit 1 if isolation is incomplete.");

  CLI::App* labs_command = app.add_subcommand(
      "labs", "The labs of the prepared cache, their student files, tests and rubric warnings.");
  add_cache(labs_command, a);

  // The perf driver's launcher (internal): the sandbox, then the worker with the arguments as
  // given.
  CLI::App* sandbox_command =
      app.add_subcommand("sandbox-exec", "internal: SPEC.json [worker arguments...]");
  sandbox_command->prefix_command()->group("");

  // The intake's unpacker (internal): run in the sandbox as the sandbox user (intake_stage.cpp).
  std::string unpack_archive_path, unpack_into;
  CLI::App* unpack_command = app.add_subcommand("unpack", "internal: ARCHIVE INTO");
  unpack_command->group("");
  unpack_command->add_option("ARCHIVE", unpack_archive_path, "the submission's archive")
      ->required();
  unpack_command->add_option("INTO", unpack_into, "the folder to unpack it into")->required();

  // `workbook-grade` alone prints the help and fails; `help` prints it too.
  if (argc < 2) {
    std::cout << app.help();
    return 2;
  }
  if (argc == 2 && std::string(argv[1]) == "help") {
    std::cout << app.help();
    return 0;
  }
  // A command comes first: name what stands in its place (CLI11 would say only that one is
  // missing).
  const std::string command = argv[1];
  if (command != "-h" && command != "--help" &&
      app.get_subcommands([&](const CLI::App* c) { return c->get_name() == command; }).empty()) {
    std::cerr << "workbook-grade: unknown " << (command.rfind('-', 0) == 0 ? "option" : "command")
              << " '" << command
              << "' (a command comes first)\nRun with --help for the commands.\n";
    return 2;
  }
  if (const std::optional<int> code = workbook::parse_command_line(app, argc, argv)) return *code;
  try {
    if (*sandbox_command) {
      // Everything after SPEC.json is the worker's; nothing before it is ours.
      const std::vector<std::string> rest = sandbox_command->remaining();
      if (rest.empty() || rest.front().rfind('-', 0) == 0) {
        std::cerr
            << "workbook-grade sandbox-exec: SPEC.json comes first, then the worker's arguments"
            << (rest.empty() ? std::string() : ", not '" + rest.front() + "'")
            << "\nRun with --help for more information.\n";
        return 2;
      }
      return sandbox_exec(rest);
    }
    if (*unpack_command) {
      try {
        unpack_archive(unpack_archive_path, unpack_into);
      } catch (const std::runtime_error& e) {
        std::cerr << e.what() << "\n";
        return 1;
      }
      return 0;
    }
    if (*prepare_command) {
      const Cache c = prepare(prepare_options(a), std::cerr);
      int unavailable = 0;
      for (const auto& [n, lab] : c.labs) unavailable += !lab.available;
      const GradeOptions canary = canary_options(a);
      const bool proved = prove_cache(canary.cache, canary, std::cerr);
      return unavailable == 0 && proved ? 0 : 1;
    }
    if (*grade_command) return cmd_grade(a);
    if (*batch_command) return cmd_batch(a, *batch_command);
    if (*summary_command) {
      if (!fs::is_directory(real_path(a.out) / "submissions")) {
        std::cerr
            << "workbook-grade summary: " << real_path(a.out).string()
            << " holds no submissions/ folder: it is not a batch's --out (run `workbook-grade "
               "batch SUBMISSIONS --out "
            << a.out << "` first)\n";
        return 2;
      }
      SummaryOptions s = a.summary;
      s.cache = cache_of(a);
      s.trusted = trusted_of(a);
      write_summary(real_path(a.out), s, std::cerr);
      return 0;
    }
    if (*kit_command) return cmd_kit(a);
    if (*package_command) return cmd_package(a);
    if (*doctor_command) {
      // What isolates student code here, and what a CUDA program would get in the jail.
      json report = isolation().to_json();
      // The limits a grade gets by default (the options of `grade` and `batch` change them).
      const GradeLimits l;
      report["grade_limits"] = {
          {"memory_mib", l.memory_bytes >> 20},
          {"processes", l.processes},
          {"cpus", l.cpus > 0 ? l.cpus : cpus_of_this_process()},
          {"work_mib", l.work_bytes >> 20},
          {"applied", isolation().cgroup != 0 ? "per grade, by its cgroup" : "not (no cgroup)"},
          {"work_quota", isolation().work_quota ? "a tmpfs on the work folder" : "none"}};
      report["gpu"] = gpu_access().to_json();
      std::cout << valid_json(report).dump(2) << "\n";
      return isolation().complete() ? 0 : 1;
    }
    return cmd_labs(a);  // the one command left
  } catch (const std::exception& e) {
    std::cerr << "workbook-grade: " << e.what() << "\n";
    return 2;
  }
}
