// Grading one submission: the orchestrator of the pipeline. Each stage is a file of its own:
//   intake_stage  the submission's whitelisted files into a fresh workspace
//   build_stage   compile with the trusted build's commands, audit (audit_stage), link
//   run_stage     visible tests (private channel) and hidden tests (sealed checker)
//   score_stage   items from the rubric, gates, totals
//   perf_stage    the perf cases, timed by the harness's driver
//   report.cpp    every output file, from the GradeResult alone
// Everything the student wrote runs in the sandbox (compile, link, tests, kernels); results come
// back only through channels the grader reads itself: the test channel (nonce-tagged records), the
// sealed checker (no student code in it), and the perf driver's clock.
#include <grade/grade.hpp>

#include <grade/cgroup.hpp>
#include <grade/report.hpp>
#include <grade/rescore.hpp>
#include <grade/sandbox.hpp>

#include "build_stage.hpp"
#include "intake_stage.hpp"
#include "perf_stage.hpp"
#include "run_stage.hpp"
#include "score_stage.hpp"
#include "workspace.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

using nlohmann::json;

LabResult grade_lab(Context& c, const LabRecipe& lab, bool submitted, const std::string& missing) {
  const auto start = Clock::now();
  LabResult result;
  result.number = lab.number;
  result.folder = lab.folder;
  c.log << "  " << lab.name() << " (" << lab.folder << ")\n" << std::flush;
  if (!lab.available) {
    result.status = LabStatus::unavailable;
    result.notes.push_back(lab.unavailable);
    Item build;
    build.lab = lab.number;
    build.test = "build";
    build.status = ItemStatus::skipped;
    build.output = "Not graded: this lab cannot be graded on this machine (" +
                   first_errors(lab.unavailable, 5) + ").";
    result.items.push_back(build);
    return result;
  }
  const Rubric rubric = c.cache.rubric(lab);
  result.title = rubric.title;
  result.graded_with = outcome_settings(rubric);
  std::vector<Item> items = all_items(lab, rubric);
  if (!c.options.perf) {
    // Graded without perf: the perf cases leave the maximum for every submission alike.
    for (Item& i : items) {
      if (i.source != Source::perf) continue;
      i.status = ItemStatus::skipped;
      i.details["grader"] = true;
      i.output = "Not timed (the grader ran without perf).";
    }
  }
  Item build;
  build.lab = lab.number;
  build.test = "build";
  build.function = "";
  build.status = ItemStatus::passed;
  build.visibility = "visible";

  auto finish = [&] {
    total_lab(result, std::move(items), build, lab, rubric);
    result.seconds = since(start);
    return result;
  };

  if (!submitted) {
    result.status = LabStatus::not_submitted;
    build.status = ItemStatus::failed;
    build.output = "Not submitted: " + missing;
    fail_all(items, "Not graded: " + missing);
    return finish();
  }
  BuildStep step;
  {
    PhaseLock shared(c.cache.root, false);
    step = build_lab(c, lab, rubric);
  }
  if (!step.ok) {
    result.status = step.status;
    result.build_output = step.output;
    build.status = ItemStatus::failed;
    build.output =
        fenced(step.output) + "\nEvery test of lab " + lab.number + " counts 0 until it builds.";
    fail_all(items,
             "Not run: lab " + lab.number + " does not build (see " + lab.name() + " build).");
    c.log << "    build: " << to_string(step.status) << "\n";
    return finish();
  }
  build.output = "Built: " + lab.edit() + " compiled and linked with the lab's tests.";
  {
    PhaseLock shared(c.cache.root, false);
    // Hidden first: a function whose calls time out there is not run again in every visible test.
    run_hidden(c, lab, rubric, items, start);
    run_visible(c, lab, rubric, items, start);
  }
  const Gates gates = apply_gates(items);
  run_perf(c, lab, rubric, items, result, gates.not_timed, start);
  return finish();
}

// The machine failed one of the lab's runs: nothing of the lab is the student's, every item is
// left out of the score (not a zero), and the exit code says so (kExitLabsNotGraded).
LabResult environment_failure(const LabRecipe& lab, const Rubric& rubric, const std::string& what) {
  LabResult result;
  result.number = lab.number;
  result.folder = lab.folder;
  result.title = rubric.title;
  result.status = LabStatus::environment_error;
  result.notes.push_back("environment error (the grader's machine, not the submission): " + what);
  Item build;
  build.lab = lab.number;
  build.test = "build";
  std::vector<Item> items = all_items(lab, rubric);
  for (Item& i : items) {
    i.status = ItemStatus::skipped;
    i.details["grader"] = true;
    i.output = "Not graded: the grader's machine failed (" + what +
               "). Not your code: this lab is graded again once the machine is fixed.";
  }
  build.status = ItemStatus::skipped;
  build.output = items.empty() ? "Not graded." : items.front().output;
  total_lab(result, std::move(items), build, lab, rubric);
  return result;
}

}  // namespace

int sandbox_exec(const std::vector<std::string>& args) {
  if (args.empty()) throw std::invalid_argument("sandbox-exec SPEC.json [arguments...]");
  const json j = read_json(args[0]);
  SandboxSpec spec = spec_from_json(j);
  spec.argv.insert(spec.argv.end(), args.begin() + 1, args.end());
  // The driver's channel: our fds 3 and 4 go to the worker as its 3 and 4.
  spec.pass_fds = {};
  for (int fd : j.value("pass_fds", std::vector<int>{3, 4}))
    spec.pass_fds.push_back(fcntl(fd, F_DUPFD_CLOEXEC, 10));
  for (int fd : {3, 4}) close(fd);
  RunResult r;
  try {
    r = run_sandboxed(spec);
  } catch (const EnvironmentError& e) {
    std::cerr << "workbook-grade sandbox-exec: " << e.what() << "\n";
    return kEnvironmentErrorExit;
  }
  if (j.contains("log")) {
    std::ofstream log(j["log"].get<std::string>(), std::ios::app);
    log << "--- " << r.describe() << " (" << r.output_bytes << " bytes of output)\n"
        << r.output_with_note();
  }
  if (!r.started) return 127;
  if (r.exited) return r.code;
  return 128 + (r.signal ? r.signal : 9);
}

GradeResult grade(const GradeOptions& o, std::ostream& log) {
  const auto start = Clock::now();
  GradeResult result;
  result.started_at = utc_now();
  result.submission = o.submission.string();
  result.id = o.id.empty() ? trimmed_id(o.submission) : o.id;
  // One base seed for the whole submission: every test and perf case derives its own from it, and
  // a failure names it so the student can replay it.
  result.seed = o.seed ? *o.seed : std::stoull(random_hex(6), nullptr, 16);
  setenv("WORKBOOK_SEED", std::to_string(result.seed).c_str(), 1);

  // The generation of the cache current now, held until the grade ends: a prepare meanwhile
  // builds another beside it.
  const CacheInUse in_use(o.cache);
  const Cache* cache = &in_use.cache();
  result.cache_key = cache->key;
  result.isolation = isolation().to_json();
  if (!isolation().complete())
    for (const std::string& n : isolation().notes) result.warnings.push_back("isolation: " + n);

  // The grade's cgroup (memory, processes, CPU of every process at once; killed whole at the end,
  // or by its reaper when the grader is killed) and its files under a quota, where the machine
  // has them (isolation(): then they are required).
  Workspace ws(o.work.empty()
                   ? fs::temp_directory_path() / ("workbook-grade-" + std::to_string(geteuid()))
                   : o.work,
               o.slot, o.keep_work, isolation().work_quota ? o.limits.work_bytes : 0);
  GradeScope scope(o.limits, ws.mounted && !ws.keep ? ws.root.string() : "");
  Context c{o, *cache, ws, log, result.seed};
  c.cgroup = scope.cgroup();
  // Parallel tests share the sandbox user; without a pid namespace leftovers are killed by user id,
  // which would hit the other test too.
  c.parallel_ok = isolation().pid_namespace || !isolation().root;
  log << "grading " << result.id << " (" << o.submission.string() << "), seed " << result.seed
      << "\n";

  // The submission: a folder, an archive, or the trusted tree's own reference or stub files.
  const fs::path root = submission_root(c);
  result.leaderboard_name = leaderboard_name(root);

  // Which basenames are unambiguous across labs (for flat uploads).
  std::map<std::string, int> name_count;
  for (const auto& [n, lab] : cache->labs)
    for (const std::string& f : lab.student_files) ++name_count[fs::path(f).filename().string()];

  for (const std::string& n : o.labs)
    if (!cache->labs.count(n))
      throw std::invalid_argument("there is no lab " + n + " in the grading cache " +
                                  o.cache.string());
  for (const auto& [n, lab] : cache->labs) {
    if (!o.labs.empty() && std::find(o.labs.begin(), o.labs.end(), n) == o.labs.end()) continue;
    const Rubric lab_rubric = lab.available ? cache->rubric(lab) : Rubric::default_for(n);
    LabIntake taken = take_lab_files(c, root, lab, lab_rubric, name_count);
    // A copy of what was taken, for the class's similarity check after the deadline (summary).
    if (!o.out.empty())
      for (const SubmittedFile& f : taken.files) {
        fs::create_directories((o.out / "sources" / f.path).parent_path());
        fs::copy_file(ws.src() / f.path, o.out / "sources" / f.path,
                      fs::copy_options::overwrite_existing);
      }
    result.files.insert(result.files.end(), taken.files.begin(), taken.files.end());
    LabResult lr;
    try {
      lr = grade_lab(c, lab, taken.submitted, taken.missing);
    } catch (const EnvironmentError& e) {
      lr = environment_failure(lab, lab_rubric, e.what());
      log << "  " << lab.name() << ": ENVIRONMENT ERROR: " << e.what() << "\n";
    }
    log << "  " << lab.name() << ": " << fixed(lr.score, 1) << " / " << fixed(lr.max_score, 1)
        << " (" << to_string(lr.status) << ", " << fixed(lr.seconds, 1) << " s)\n"
        << std::flush;
    for (const std::string& n2 : lr.notes) result.warnings.push_back(lab.name() + ": " + n2);
    for (const std::string& w : lab.rubric_warnings)
      result.warnings.push_back(lab.name() + " rubric: " + w);
    result.score += lr.score;
    result.max_score += lr.max_score;
    result.labs.push_back(std::move(lr));
  }
  // The ceilings the perf cases were judged by (measured at prepare, or again by the driver).
  if (fs::exists(cache->ceilings)) {
    try {
      result.ceilings = read_json(cache->ceilings);
    } catch (const std::exception&) {
    }
  }
  result.seconds = since(start);
  write_outputs(result, o);
  log << "score " << fixed(result.score, 2) << " / " << fixed(result.max_score, 2) << " in "
      << fixed(result.seconds, 1) << " s\n";
  return result;
}

}  // namespace workbook::grade
