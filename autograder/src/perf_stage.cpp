// Perf (see perf_stage.hpp): the harness's driver, with the student's worker in the sandbox.
#include "perf_stage.hpp"

#include <grade/sandbox.hpp>

#include <workbook/ceilings.hpp>
#include <workbook/internal/perf_driver.hpp>
#include <workbook/internal/perf_verdict.hpp>
#include <workbook/report.hpp>
#include <workbook/roofline.hpp>
#include <workbook/seed.hpp>
#include <workbook/stats.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <regex>
#include <sstream>

namespace workbook::grade {
namespace {

using nlohmann::json;

// The name a verdict's reason has in the record and the instructor's notes ("too_slow").
std::string reason_name(perf::Reason reason) {
  return json(reason).get<std::string>();
}

// The reference's sandbox user is the job's plus this: a user of its own.
constexpr int kReferenceSlotOffset = 1000;

// The ratio a perf verdict is scored by: the driver's own judgement (perf::Graded: its clock,
// the CPU time of the student's whole process tree, its first calls on fresh inputs), never the
// times the student's worker reported, which only show on the console.
struct PerfRatios {
  bool valid = false;
  bool reference_ok = false;
  double ratio = 0, reported = 0;
  double seconds = 0, reference_seconds = 0;
};

PerfRatios perf_ratios(const perf::Verdict& v) {
  PerfRatios r;
  if (!v.student || !v.reference || !v.ratio || !v.graded) return r;
  const perf::Graded& g = *v.graded;
  r.reference_ok = g.reference_seconds > 0 && std::isfinite(g.reference_seconds);
  r.reported = g.reported_ratio;
  if (!(r.reference_ok && g.seconds > 0 && std::isfinite(g.seconds) && g.ratio > 0 &&
        std::isfinite(g.ratio)))
    return r;
  r.ratio = g.ratio;
  r.seconds = g.seconds;
  r.reference_seconds = g.reference_seconds;
  r.valid = true;
  return r;
}

}  // namespace

void run_perf(Context& c, const LabRecipe& lab, const Rubric& rubric, std::vector<Item>& items,
              LabResult& result, const std::set<std::string>& gated_off,
              Clock::time_point lab_start) {
  const std::string name = lab.name();
  const fs::path results = c.ws.priv() / "perf";
  for (Item& item : items) {
    if (item.source != Source::perf) continue;
    const Rule* rule = rubric.find(Source::perf, item.test);
    PerfScale scale = rule && rule->perf ? *rule->perf : rubric.perf;
    if (c.options.perf_full_within) scale.full_within = *c.options.perf_full_within;
    if (c.options.perf_zero_at) scale.zero_at = *c.options.perf_zero_at;
    if (c.options.perf_seconds) scale.max_seconds = *c.options.perf_seconds;
    if (item.status == ItemStatus::skipped) continue;  // not timed at all (no perf)
    if (gated_off.count(item.function)) {
      item.status = ItemStatus::failed;
      item.output = "Not timed: " + item.function +
                    " is not implemented yet, or its hidden tests fail (see them above); "
                    "a kernel is timed only once it is right.";
      continue;
    }
    if (since(lab_start) > rubric.lab_seconds) {
      item.status = ItemStatus::failed;
      item.output =
          "Not timed: the lab's time budget (" + fixed(rubric.lab_seconds, 0) + " s) ran out.";
      continue;
    }
    // Both workers run through the same launcher, in the same kind of sandbox, so that neither
    // gets conditions the other lacks; the reference as a user of its own (it cannot be signalled
    // or traced from the student's), its binary executable but not readable.
    auto launcher_for = [&](const std::string& who, const fs::path& worker, int slot,
                            const fs::path& mount) {
      SandboxSpec s = base_spec(
          c, rubric, std::max(600.0, 20 * scale.max_seconds + 3 * rubric.test_timeout_seconds));
      s.slot = slot;
      s.gpu = lab.gpu;
      s.argv = {worker.string()};
      s.mounts.push_back({mount.string(), false});
      s.mounts.push_back({lab.lab_dir.string(), false});
      json spec = spec_to_json(s);
      const std::string stem = name + "-perf-" + item.test + "-" + who;
      spec["log"] = (c.ws.priv() / (stem + ".log")).string();
      // The driver's channel (3, 4) and the shared memory into which the worker copies the output
      // of the timed call the driver checks (5).
      spec["pass_fds"] = {3, 4, 5};
      write_json(c.ws.priv() / (stem + ".json"), spec);
      const fs::path launcher = c.ws.priv() / (stem + ".sh");
      write_text_atomic(launcher, "#!/bin/sh\nexec " + shell_quote(self_executable().string()) +
                                      " sandbox-exec " +
                                      shell_quote((c.ws.priv() / (stem + ".json")).string()) +
                                      " \"$@\"\n");
      fs::permissions(launcher, fs::perms::owner_all);
      return launcher.string();
    };

    perf::DriverOptions o;
    o.lab = name;
    o.case_name = item.test;
    o.student = launcher_for("student", c.ws.bin(name) / "perf", c.options.slot, c.ws.bin(name));
    if (!lab.perf_reference.empty())
      o.reference = launcher_for("reference", lab.perf_reference,
                                 c.options.slot + kReferenceSlotOffset, lab.perf_reference);
    else
      o.profile = lab.profile;
    o.ceilings_path = c.cache.ceilings.string();
    o.results = results;
    o.edit = lab.edit();
    o.max_ratio = scale.full_within;
    o.seed = seed_for(name + "." + item.test);
    o.timing.max_seconds = scale.max_seconds;
    o.timeout_seconds = c.options.test_timeout.value_or(rubric.test_timeout_seconds) * 3;
    std::ostringstream text;
    const auto start = Clock::now();
    std::optional<perf::Verdict> verdict;
    {
      std::unique_ptr<PhaseLock> alone;
      if (c.options.perf_lock) alone = std::make_unique<PhaseLock>(c.cache.root, true);
      try {
        verdict = perf::drive(o, text);  // the verdict, a value (its record is written too)
      } catch (const std::exception& e) {
        text << "ERROR: " << e.what() << "\n";
      }
    }
    const PerfRatios ratios = verdict ? perf_ratios(*verdict) : PerfRatios{};
    item.seconds = since(start);
    if (!verdict) {
      item.status = ItemStatus::skipped;
      item.details["grader"] = true;
      item.output =
          "Not graded: the perf driver failed (a problem of the grader, not of your code):\n" +
          fenced(cut(text.str(), 2000));
      result.notes.push_back("perf " + item.test + ": driver error");
      continue;
    }
    const perf::Verdict& v = *verdict;
    const std::string reason = reason_name(v.reason);
    if (const std::string svg = perf::roofline_plot(v); !svg.empty())
      result.plots.emplace_back(item.test, svg);
    item.details["verdict"] = v.outcome;
    item.details["reason"] = reason;
    if (v.outcome == perf::Outcome::error && v.reason == perf::Reason::mismatch) {
      // The student's worker describes the work itself: a mismatch is its doing. Fail closed.
      item.status = ItemStatus::failed;
      item.output = "Not graded: your perf worker described different work than the reference's (" +
                    v.message + ").";
      item.details["grader_error"] = true;
      continue;
    }
    if (v.outcome == perf::Outcome::error) {
      item.status = ItemStatus::skipped;
      item.details["grader"] = true;
      item.output = "Not graded: " + v.message + " (a problem of the grader, not of your code).";
      result.notes.push_back("perf " + item.test + ": " + reason);
      continue;
    }
    if (v.outcome == perf::Outcome::fail &&
        (v.reason == perf::Reason::timed_output_differs ||
         v.reason == perf::Reason::output_tampered || v.reason == perf::Reason::wrong)) {
      // The driver's own check of a timed call: the output differs from the reference's on the same
      // inputs, though the check in the student's process passed; or the perf worker's own check
      // fails a kernel that is timed only once its tests pass (it computes differently when called
      // as the timing calls it). No points, and flagged.
      item.status = ItemStatus::failed;
      item.output =
          "**Not credited:** " + v.message +
          (v.reason == perf::Reason::wrong
               ? "\nYour kernel passed its tests, but not when called as the timing calls it (the "
                 "same buffers again and again): Your kernel skips or fakes work when timed, or "
                 "keeps state from one call to the next."
               : "") +
          " If you believe your kernel is right, ask your instructor to look at it.\n\nEdit " +
          lab.edit() + ".";
      item.details["flag"] = "timed output differs from the reference's";
      item.details["timed_output_differs"] = true;
      result.notes.push_back("perf " + item.test +
                             ": the output of a timed call differs from the reference's (flagged)");
      c.log << "    " << item.name()
            << ": the output of a timed call differs from the reference's\n";
      continue;
    }
    if (v.outcome == perf::Outcome::fail && v.reason != perf::Reason::too_slow) {
      item.status = ItemStatus::failed;
      item.output =
          fenced(cut(student_paths(v.message, c.ws, c.cache), 4000)) + "Edit " + lab.edit() + ".";
      continue;
    }
    if (!ratios.valid) {
      // No usable reference time is the grader's problem; no usable time of the student's is not.
      const bool theirs_missing = !ratios.reference_ok;
      item.status = theirs_missing ? ItemStatus::skipped : ItemStatus::failed;
      if (theirs_missing) item.details["grader"] = true;
      item.output =
          theirs_missing
              ? "Not graded: the reference's timing did not come back (a problem of the grader)."
              : "Not credited: your perf worker reported no usable times.";
      continue;
    }
    // The driver's judgement (perf::Graded), which code in the worker cannot shape.
    const perf::Graded& g = *v.graded;
    const double ratio = ratios.ratio;
    const double mine = ratios.seconds;
    const double theirs = ratios.reference_seconds;
    const workbook::Analysis a = workbook::analyze(*v.work, mine, *v.ceilings);
    const bool implausible =
        ratio < scale.implausible_ratio && a.fraction_of_roof > scale.implausible_roof;
    item.score = implausible ? 0 : item.max_score * scale.fraction(ratio);
    item.status = item.score >= item.max_score - 1e-9 ? ItemStatus::passed : ItemStatus::failed;
    item.details.update({{"ratio", ratio},
                         {"worker_reported_ratio", ratios.reported},
                         {"grader_clock_ratio", ratio},
                         {"seconds", mine},
                         {"reference_seconds", theirs},
                         {"fraction_of_roof", a.fraction_of_roof},
                         {"gops", a.gops},
                         {"gbs", a.gbs},
                         {"intensity", a.intensity},
                         {"ops_unit", v.work->ops_unit},
                         {"traffic", v.work->traffic},
                         {"full_within", scale.full_within},
                         {"zero_at", scale.zero_at},
                         {"implausible", implausible},
                         {"kept_apart_by", g.apart},
                         {"cpu", g.yours},
                         {"output_checked", v.output_check && v.output_check->checked}});
    if (g.fresh) item.details["fresh_inputs"] = *g.fresh;
    // For the class summary: the spread of the interleaved rounds' ratios (the leaderboard's
    // interval), a slow first pair measured again, and the machine kind the time belongs to.
    if (v.ratio) {
      item.details["ratio_median"] =
          v.ratio->median;  // the rounds' (the graded ratio is the clock's)
      item.details["ratio_q1"] = v.ratio->q1;
      item.details["ratio_q3"] = v.ratio->q3;
    }
    if (v.first_attempt_ratio) item.details["first_attempt_ratio"] = *v.first_attempt_ratio;
    item.details["machine"] =
        v.ceilings->device.empty() ? v.ceilings->machine.cpu_model : v.ceilings->device;
    std::string grading = std::string("**Graded** by the grader's own clock: your time is **") +
                          fixed(ratio) + "x** the reference's" +
                          (v.reference->expected_from_profile
                               ? " (expected from its recorded fraction of the roofline)"
                               : "") +
                          ": " + fixed(item.score, 2) + " of " + fixed(item.max_score, 2) +
                          " points (full within " + fixed(scale.full_within) + "x, none from " +
                          fixed(scale.zero_at) + "x).\n";
    if (!g.flags.empty()) {
      // Each flag says what was observed and what it changed; the instructor sees them all.
      std::string flags;
      for (const std::string& f : g.flags) {
        grading += "(Flagged: " + f + ")\n";
        flags += (flags.empty() ? "" : " / ") + f;
      }
      item.details["flag"] = flags;
      result.notes.push_back("perf " + item.test + ": " + flags + " (flagged)");
      c.log << "    " << item.name() << ": flagged: " << flags << "\n";
    }
    if (implausible) {
      grading = "**Not credited:** your kernel took " + fixed(ratio) +
                "x the reference's time and reached " +
                workbook::format_percent(a.fraction_of_roof) +
                " of the roofline this machine allows. A kernel that fast "
                "skips work or reuses results between calls; the timing is not graded. If you "
                "believe it is genuine, "
                "ask your instructor to look at it.\n";
      item.details["flag"] = "implausibly fast";
    }
    item.output = grading + "\n" + perf::markdown(v, false);
    c.log << "    " << item.name() << ": " << fixed(ratio) << "x, " << fixed(item.score) << "/"
          << fixed(item.max_score) << "\n";
  }
}

// --- One lab
// ------------------------------------------------------------------------------------------

}  // namespace workbook::grade
