// Grading on a Slurm cluster (see slurm.hpp). Everything the cluster does is in the sbatch files
// this writes to OUT/slurm/; this file submits them, watches the queue and merges the results.
#include <grade/slurm.hpp>

#include <grade/hash.hpp>
#include <grade/report.hpp>
#include <grade/util.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

using nlohmann::json;

void require_slurm() {
  std::vector<std::string> missing;
  for (const char* program : {"sbatch", "squeue", "scancel"})
    if (find_on_path(program).empty()) missing.emplace_back(program);
  if (missing.empty()) return;
  std::string names;
  for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
  throw std::runtime_error(
      "batch --slurm needs Slurm's commands, and " + names + (missing.size() > 1 ? " are" : " is") +
      " not on PATH here. Run it on the cluster's login node (where `sinfo` lists the partitions), "
      "or "
      "install Slurm's client on this machine (Debian/Ubuntu: sudo apt-get install slurm-client; "
      "it "
      "also needs the cluster's /etc/slurm/slurm.conf and munge key). Without a cluster, grade "
      "locally: drop --slurm.");
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : separator) + i;
  return s;
}

// A submission's state in this run, per group.
enum class TaskState { pending, running, done, failed };

struct Submitted {
  std::string group;
  std::string job;               // the array's job id
  std::vector<std::string> ids;  // the submission of task i
};

// Where a group's results and files live.
fs::path slurm_dir(const BatchOptions& b) {
  return b.out / "slurm";
}
fs::path results_of(const BatchOptions& b, const LabGroup& g) {
  return slurm_dir(b) / g.name;
}
std::string job_name(const BatchOptions& b, const LabGroup& g) {
  // Unique per output folder, so that two classes graded at once do not see each other's tasks.
  return "workbook-" + g.name + "-" + hash_hex(b.out.string()).substr(0, 8);
}

// This run's tasks still in the queue, as squeue shows them.
std::map<std::string, QueuedTask> queued(const BatchOptions& b,
                                         const std::vector<LabGroup>& groups) {
  std::vector<std::string> names;
  for (const LabGroup& g : groups) names.push_back(job_name(b, g));
  const ToolOutput c = run_tool(
      {"squeue", "--noheader", "--array", "--name=" + join(names, ","), "--format=%i|%T|%r"});
  if (c.exit_code != 0)
    throw std::runtime_error("squeue failed (exit code " + std::to_string(c.exit_code) +
                             "): " + first_errors(c.output, 5));
  return parse_queue(c.output);
}

// Why a task ended without a result: sacct's state where accounting is on, else its log's words.
std::string why_failed(const std::string& job, std::size_t task, const fs::path& log) {
  const std::string id = job + "_" + std::to_string(task);
  const ToolOutput c =
      run_tool({"sacct", "--noheader", "--parsable2", "--jobs", id, "--format=State,ExitCode"});
  if (c.exit_code == 0 && !c.output.empty()) {
    const std::string first = c.output.substr(0, c.output.find('\n'));
    const std::string state = first.substr(0, first.find('|'));
    if (state == "TIMEOUT") return "timed out (the task's time limit; raise --time)";
    if (state.rfind("CANCELLED", 0) == 0) return "cancelled";
    if (state == "OUT_OF_MEMORY") return "out of memory on its node";
    if (state == "NODE_FAIL") return "its node failed";
    if (!state.empty() && state != "COMPLETED")
      return "ended " + state + " (exit " + first.substr(first.find('|') + 1) + ")";
  }
  const std::string text = fs::exists(log) ? read_text(log) : "";
  if (text.find("DUE TO TIME LIMIT") != std::string::npos)
    return "timed out (the task's time limit; raise --time)";
  if (text.find("CANCELLED") != std::string::npos) return "cancelled";
  if (text.empty()) return "ended without a result and without a log (" + log.string() + ")";
  return "ended without a result; its log ends with:\n" +
         first_errors(text.size() > 1500 ? text.substr(text.size() - 1500) : text, 12);
}

// The results of one student, every group done: merged and written where a local batch puts them.
void publish(const BatchOptions& b, const std::vector<LabGroup>& groups, const std::string& id) {
  std::vector<GradeResult> parts;
  std::string logs;
  for (const LabGroup& g : groups) {
    const fs::path dir = results_of(b, g) / id;
    parts.push_back(GradeResult::from_json(read_json(dir / "record.json")));
    if (fs::exists(dir / "grade.log"))
      logs += "=== lab group " + g.name + " ===\n" + read_text(dir / "grade.log");
  }
  const fs::path done = b.out / "submissions";
  const fs::path partial = done / (".partial-" + id);
  fs::remove_all(partial);
  GradeOptions o;
  o.out = partial;
  write_outputs(merge_results(parts), o);
  write_text_atomic(partial / "grade.log", logs);
  publish_result(partial, done / id);
}

// The grade options a task passes on: the batch's, less --labs and --seed, which each task sets.
std::vector<std::string> passed_on(const std::vector<std::string>& arguments) {
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i] == "--labs" || arguments[i] == "--seed") {
      ++i;
      continue;
    }
    kept.push_back(arguments[i]);
  }
  return kept;
}

// The batch's --seed, when it gives one.
std::optional<std::uint64_t> batch_seed(const std::vector<std::string>& arguments) {
  for (std::size_t i = 0; i + 1 < arguments.size(); ++i)
    if (arguments[i] == "--seed") return std::stoull(arguments[i + 1]);
  return std::nullopt;
}

}  // namespace

std::map<std::string, QueuedTask> parse_queue(const std::string& squeue_output) {
  std::map<std::string, QueuedTask> tasks;
  std::istringstream lines(squeue_output);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t a = line.find('|'), b = line.find('|', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    tasks[line.substr(0, a)] = {line.substr(a + 1, b - a - 1), line.substr(b + 1)};
  }
  return tasks;
}

bool launch_failed(const std::string& reason) {
  // slurmctld's words when a node could not start the job: it requeues it held, and a held job
  // stays pending until someone releases it, which would only fail the same way again.
  return reason.find("launch failed") != std::string::npos ||
         reason.find("launch_failed") != std::string::npos;
}

std::vector<LabGroup> lab_groups(const fs::path& trusted, const std::vector<std::string>& wanted) {
  LabGroup cpu{"cpu", {}, false}, gpu{"gpu", {}, true};
  const fs::path labs = trusted / "labs";
  if (!fs::is_directory(labs))
    throw std::invalid_argument(
        trusted.string() + " has no labs/ folder: is it the course's source tree? (--trusted)");
  std::set<std::string> found;
  for (const auto& e : fs::directory_iterator(labs)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.size() < 3 || name[2] != '_') continue;
    const std::string number = name.substr(0, 2);
    found.insert(number);
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), number) == wanted.end())
      continue;
    bool cuda = false;
    for (const auto& f : fs::directory_iterator(e.path()))
      cuda = cuda || f.path().extension() == ".cu";
    (cuda ? gpu : cpu).labs.push_back(number);
  }
  for (const std::string& w : wanted)
    if (!found.count(w))
      throw std::invalid_argument("there is no lab " + w + " in " + labs.string());
  std::vector<LabGroup> groups;
  for (LabGroup* g : {&cpu, &gpu}) {
    std::sort(g->labs.begin(), g->labs.end());
    if (!g->labs.empty()) groups.push_back(*g);
  }
  return groups;
}

GradeResult merge_results(const std::vector<GradeResult>& parts) {
  if (parts.empty()) throw std::invalid_argument("merge_results: nothing to merge");
  GradeResult r = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const GradeResult& p = parts[i];
    r.started_at = std::min(r.started_at, p.started_at);
    r.seconds += p.seconds;
    r.score += p.score;
    r.max_score += p.max_score;
    if (p.cache_key != r.cache_key) r.cache_key += " + " + p.cache_key;
    if (r.ceilings.is_null()) r.ceilings = p.ceilings;
    r.files.insert(r.files.end(), p.files.begin(), p.files.end());
    r.labs.insert(r.labs.end(), p.labs.begin(), p.labs.end());
    r.warnings.insert(r.warnings.end(), p.warnings.begin(), p.warnings.end());
  }
  std::sort(r.labs.begin(), r.labs.end(),
            [](const LabResult& a, const LabResult& b) { return a.number < b.number; });
  return r;
}

std::string sbatch_script(const SlurmOptions& s, const BatchOptions& b, const LabGroup& g,
                          const fs::path& tasks, std::size_t task_count, const fs::path& grader) {
  std::string array = "0-" + std::to_string(task_count - 1);
  if (s.max_parallel > 0) array += "%" + std::to_string(s.max_parallel);
  const std::string partition = g.gpu ? s.gpu_partition : s.partition;
  const std::string labs = join(g.labs, ",");

  std::string t = "#!/bin/bash\n";
  t += std::string("# Grades ") + (g.labs.size() == 1 ? "lab " : "labs ") + labs +
       " of one submission per array task, on " + (g.gpu ? "a GPU node" : "a CPU node") + ".\n";
  t += "# Written by `workbook-grade batch --slurm`; a TA may adapt it and submit it by hand:\n";
  t += "#   sbatch " + (slurm_dir(b) / (g.name + ".sbatch")).string() + "\n";
  t += "#SBATCH --job-name=" + job_name(b, g) + "\n";
  t += "#SBATCH --array=" + array + "\n";
  if (!partition.empty()) t += "#SBATCH --partition=" + partition + "\n";
  if (!s.account.empty()) t += "#SBATCH --account=" + s.account + "\n";
  t += "#SBATCH --ntasks=1\n";
  t += "# Whole cores of its own, bound, so that no neighbour disturbs the timed kernels.\n";
  t += "#SBATCH --cpus-per-task=" + std::to_string(s.cpus_per_task) + "\n";
  t += "#SBATCH --hint=nomultithread\n";
  if (s.exclusive) t += "#SBATCH --exclusive\n";
  if (g.gpu) t += "#SBATCH --gres=gpu:1\n";
  t += "#SBATCH --time=" + std::to_string(s.time_minutes) + "\n";
  t += "#SBATCH --output=" + (slurm_dir(b) / "logs" / (g.name + "-%A_%a.log")).string() + "\n";
  t += "set -euo pipefail\n\n";

  t +=
      "# This task's submission: line SLURM_ARRAY_TASK_ID + 1 of the task list (id, seed, path).\n";
  t += "IFS=$'\\t' read -r id seed submission < <(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" " +
       shell_quote(tasks.string()) + ")\n";
  t += "results=" + shell_quote(results_of(b, g).string()) + "\n\n";
  if (s.prepared_cache) {
    t += "# The trusted cache, prepared beforehand (`workbook-grade prepare` on a node of this "
         "type).\n";
    t += "cache=" + shell_quote(b.cache.string()) + "\n\n";
  } else {
    t += std::string("# The trusted cache is built once per node type (CPU model") +
         (g.gpu ? ", GPU model" : "") +
         "): the first task on a\n# new type prepares it, under the cache's lock; the others wait "
         "for it, then reuse it.\n";
    t += "node_type=$( (grep -m1 '^model name' /proc/cpuinfo";
    if (g.gpu) t += "; nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1";
    t += ") | cksum | cut -d' ' -f1)\n";
    t += "cache=" + shell_quote(b.cache.string()) + "/" + g.name + "-$node_type\n\n";
  }
  t += "# A sandbox user slot that no other grading task on this node holds (tasks share nodes).\n";
  t += "for slot in $(seq 0 63); do\n";
  t += "  exec 9>\"/tmp/workbook-grade-slot-$slot.lock\"\n";
  t += "  flock --nonblock 9 && break\n";
  t += "done\n";
  t += "flock --nonblock 9 || { echo \"no free sandbox slot: 64 grading tasks on this node\" >&2; "
       "exit 1; }\n\n";

  t += "partial=\"$results/.partial-$id\"\n";
  t += "rm -rf \"$partial\"\n";
  t += "status=0\n";
  t += shell_quote(grader.string()) +
       " grade \"$submission\" --id \"$id\" --seed \"$seed\" --labs " + labs + " \\\n";
  t += "    --trusted " + shell_quote(s.trusted.string()) +
       " --cache \"$cache\" --slot \"$slot\" --jobs \"$SLURM_CPUS_PER_TASK\" \\\n";
  t += "    --out \"$partial\"";
  if (s.prepared_cache) t += " --no-prepare";
  for (const std::string& a : passed_on(b.grade_arguments)) t.append(" ").append(shell_quote(a));
  t += " || status=$?\n";
  t += "# 3: graded, but some labs could not be graded on this node (the result says which).\n";
  t += "if [ \"$status\" -ne 0 ] && [ \"$status\" -ne 3 ]; then\n";
  t += "  echo \"workbook-grade exited with $status: no result for $id\" >&2\n";
  t += "  exit \"$status\"\n";
  t += "fi\n";
  t += "# The result appears in one rename: complete, or not at all.\n";
  t += "rm -rf \"$results/.old-$id\"\n";
  t += "[ ! -e \"$results/$id\" ] || mv \"$results/$id\" \"$results/.old-$id\"\n";
  t += "mv \"$partial\" \"$results/$id\"\n";
  t += "rm -rf \"$results/.old-$id\"\n";
  return t;
}

int batch_slurm(const BatchOptions& b, const SlurmOptions& s, std::ostream& log) {
  require_slurm();
  const std::vector<LabGroup> groups = lab_groups(s.trusted, b.labs);
  if (groups.empty()) throw std::invalid_argument("no lab to grade");
  for (const LabGroup& g : groups)
    if (g.gpu && s.gpu_partition.empty())
      throw std::invalid_argument(
          "labs " + join(g.labs, ", ") +
          " need a GPU: name the partition of the GPU nodes with "
          "--gpu-partition P (see `sinfo`), or leave those labs out with --labs");
  const std::vector<std::pair<std::string, fs::path>> all = list_submissions(b.submissions);
  require_known(b.only, all, b.submissions);
  const fs::path dir = slurm_dir(b);
  fs::create_directories(dir / "logs");
  fs::create_directories(b.out / "submissions");
  for (const LabGroup& g : groups) fs::create_directories(results_of(b, g));

  // Tasks of an earlier run still queued: wait for them rather than grading twice.
  std::map<std::string, QueuedTask> states = queued(b, groups);
  std::vector<Submitted> submitted;
  const fs::path jobs_file = dir / "jobs.json";
  if (!states.empty() && fs::exists(jobs_file)) {
    log << states.size()
        << " task(s) of an earlier run are still queued or running: waiting for them\n";
    for (const json& j : read_json(jobs_file))
      submitted.push_back({j.at("group"), j.at("job"), j.at("ids")});
  } else {
    // One seed per submission, the same for all its groups: a failure's seed replays it.
    std::map<std::string, std::uint64_t> seeds;
    const fs::path seeds_file = dir / "seeds.json";
    if (fs::exists(seeds_file))
      seeds = read_json(seeds_file).get<std::map<std::string, std::uint64_t>>();
    const std::optional<std::uint64_t> fixed_seed = batch_seed(b.grade_arguments);
    for (const auto& [id, path] : all)
      if (fixed_seed)
        seeds[id] = *fixed_seed;
      else if (!seeds.count(id))
        seeds[id] = std::stoull(random_hex(6), nullptr, 16);
    write_json(seeds_file, seeds);
    json jobs = json::array();
    for (const LabGroup& g : groups) {
      std::string list;
      std::vector<std::string> ids;
      for (const auto& [id, path] : all) {
        const bool asked = std::find(b.only.begin(), b.only.end(), id) != b.only.end();
        if (b.only.empty() ? !b.regrade && fs::exists(results_of(b, g) / id / "record.json")
                           : !asked)
          continue;
        list += id + "\t" + std::to_string(seeds[id]) + "\t" + path.string() + "\n";
        ids.push_back(id);
      }
      if (ids.empty()) continue;
      const fs::path tasks = dir / (g.name + ".tasks");
      write_text_atomic(tasks, list);
      const fs::path script = dir / (g.name + ".sbatch");
      write_text_atomic(script, sbatch_script(s, b, g, tasks, ids.size(), self_executable()));
      const ToolOutput c = run_tool({"sbatch", "--parsable", script.string()});
      if (c.exit_code != 0)
        throw std::runtime_error("sbatch refused " + script.string() + " (exit code " +
                                 std::to_string(c.exit_code) + "):\n" + first_errors(c.output, 10) +
                                 "Check the partition and account (sinfo, sacctmgr show assoc).");
      const std::string job = c.output.substr(0, c.output.find_first_of(";\n"));
      log << "submitted " << ids.size() << " task(s) of " << (g.labs.size() == 1 ? "lab " : "labs ")
          << join(g.labs, ", ") << " as job array " << job << " (" << script.string() << ")\n";
      submitted.push_back({g.name, job, ids});
      jobs.push_back({{"group", g.name}, {"job", job}, {"ids", ids}});
    }
    write_json(jobs_file, jobs);
    if (submitted.empty()) log << "every lab group of every submission is already graded\n";
  }
  if (!s.wait) {
    log << "not waiting (--no-wait): run the same command again to follow the tasks and collect "
           "the results\n";
    return 0;
  }

  // Waiting: the queue's states, and results as they appear.
  auto state_of = [&](const Submitted& job, std::size_t task,
                      const std::map<std::string, QueuedTask>& queue) {
    const auto it = queue.find(job.job + "_" + std::to_string(task));
    const LabGroup& g = *std::find_if(groups.begin(), groups.end(),
                                      [&](const LabGroup& x) { return x.name == job.group; });
    if (it != queue.end())
      return it->second.state == "PENDING" ? TaskState::pending : TaskState::running;
    return fs::exists(results_of(b, g) / job.ids[task] / "record.json") ? TaskState::done
                                                                        : TaskState::failed;
  };
  // Tasks that Slurm could not start and holds: cancelled, so that the batch ends and a re-run
  // submits them again; the reason is reported with the student.
  std::map<std::string, std::string> not_started;
  std::string last;
  for (;;) {
    states = queued(b, groups);
    for (const Submitted& j : submitted)
      for (std::size_t t = 0; t < j.ids.size(); ++t) {
        const std::string id = j.job + "_" + std::to_string(t);
        const auto it = states.find(id);
        if (it == states.end() || it->second.state != "PENDING" ||
            !launch_failed(it->second.reason))
          continue;
        run_tool({"scancel", id});
        not_started[id] = it->second.reason;
        states.erase(it);
      }
    std::map<TaskState, int> count;
    std::map<std::string, int> waiting_for;  // why the pending tasks wait, as Slurm says
    for (const Submitted& j : submitted)
      for (std::size_t t = 0; t < j.ids.size(); ++t) {
        const TaskState state = state_of(j, t, states);
        ++count[state];
        if (state == TaskState::pending)
          ++waiting_for[states.at(j.job + "_" + std::to_string(t)).reason];
      }
    std::ostringstream line;
    line << "slurm: " << count[TaskState::pending] << " pending";
    std::string reasons;
    for (const auto& [reason, n] : waiting_for)
      if (!reason.empty() && reason != "None")
        reasons += (reasons.empty() ? "" : ", ") + reason + ": " + std::to_string(n);
    if (!reasons.empty()) line << " (" << reasons << ")";
    line << ", " << count[TaskState::running] << " running, " << count[TaskState::done] << " done, "
         << count[TaskState::failed] << " failed";
    if (line.str() != last) log << line.str() << "\n" << std::flush;
    last = line.str();
    if (count[TaskState::pending] + count[TaskState::running] == 0) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(s.poll_seconds));
  }

  // Failures, per student, with the reason; they are retried by the next run.
  int failed_submissions = 0;
  std::set<std::string> failed_ids;
  std::string errors;
  for (const Submitted& j : submitted)
    for (std::size_t t = 0; t < j.ids.size(); ++t) {
      if (state_of(j, t, {}) != TaskState::failed) continue;
      const fs::path task_log =
          dir / "logs" / (j.group + "-" + j.job + "_" + std::to_string(t) + ".log");
      const auto held = not_started.find(j.job + "_" + std::to_string(t));
      const std::string why =
          held == not_started.end()
              ? why_failed(j.job, t, task_log)
              : "Slurm could not start it on its node and held it (\"" + held->second +
                    "\"), so the batch cancelled it. The node's slurmd log says why (on a "
                    "cluster, `scontrol show job` names the node: ask its admins)";
      failed_ids.insert(j.ids[t]);
      log << "NOT GRADED: " << j.ids[t] << ", lab group " << j.group << ": " << why
          << " (log: " << task_log.string() << "; retried on the next run)\n";
      errors += utc_now() + " " + j.ids[t] + " (" + j.group + ", task " + j.job + "_" +
                std::to_string(t) + "): " + why + "\n";
    }
  if (!errors.empty())
    write_text_atomic(
        b.out / "errors.log",
        (fs::exists(b.out / "errors.log") ? read_text(b.out / "errors.log") : "") + errors);

  // Every student whose groups are all done: one result, as a local batch writes it.
  std::size_t published = 0, ungraded_labs = 0;
  for (const auto& [id, path] : all) {
    const bool complete = std::all_of(groups.begin(), groups.end(), [&](const LabGroup& g) {
      return fs::exists(results_of(b, g) / id / "record.json");
    });
    if (!complete) {
      failed_ids.insert(id);  // failed now, or earlier and not yet retried (--no-wait)
      continue;
    }
    publish(b, groups, id);
    ++published;
    const json record = read_json(b.out / "submissions" / id / "record.json");
    for (const json& lab : record.value("labs", json::array()))
      ungraded_labs += lab.value("status", "") == "not_graded" ||
                       lab.value("status", "") == "unavailable" ||
                       lab.value("status", "") == "environment_error";
  }
  failed_submissions = static_cast<int>(failed_ids.size());
  log << published << " of " << all.size() << " submissions graded on Slurm";
  if (failed_submissions > 0)
    log << "; " << failed_submissions << " not graded (see above and "
        << (b.out / "errors.log").string() << "): run the same command again to retry them";
  log << "\n";
  write_summary(b.out, b.summary, log);
  if (failed_submissions > 0) return kExitSubmissionsNotGraded;
  return ungraded_labs > 0 ? kExitLabsNotGraded : 0;
}

}  // namespace workbook::grade
