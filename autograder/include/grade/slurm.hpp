#pragma once
/// \file slurm.hpp
/// \brief Grading a class on a Slurm cluster: `workbook-grade batch --slurm`.
///
/// The submissions are graded by Slurm job arrays, one array per lab group (the CPU labs on CPU
/// nodes, the CUDA labs on GPU nodes with a GPU each) and one task per submission. Each task runs
/// `workbook-grade grade` on its node, on cores of its own (`--cpus-per-task` whole cores, bound),
/// and renames its result into place when complete. The trusted cache is prepared once per node
/// type, by the first task that needs it (under the cache's lock; the others wait). The batch
/// waits, showing the tasks' states, then merges each student's groups into one result, laid out
/// as a local `batch` lays it out (submissions/<id>/, gradebook.csv, summary.md). A re-run submits
/// only what is missing or failed; a task that ended without a result is reported per student.

#include <grade/batch.hpp>

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace workbook::grade {

/// How the grading is spread over the cluster.
struct SlurmOptions {
  fs::path trusted;           ///< the trusted source tree (labs/, for which labs need a GPU)
  std::string partition;      ///< the CPU labs' partition; empty: the cluster's default
  std::string gpu_partition;  ///< the CUDA labs' partition; needed when a CUDA lab is graded
  std::string account;        ///< --account, when the cluster charges one
  int cpus_per_task = 2;      ///< whole cores per task (lab 03 times two threads)
  bool exclusive = false;     ///< a whole node per task: no neighbour at all while timing
  /// The cache (--cache) is prepared already for these nodes (`workbook-grade prepare` ran on one
  /// of them, and they are all of one type): tasks use it as it is. Otherwise each node type gets
  /// a cache of its own below --cache, prepared by its first task.
  bool prepared_cache = false;
  int time_minutes = 60;     ///< each task's time limit
  int max_parallel = 0;      ///< at most this many tasks of an array at once (0: no limit)
  double poll_seconds = 10;  ///< how often the queue is read while waiting
  bool wait = true;          ///< false: submit, print the job ids and return (a re-run collects)
};

/// The lab groups of a class: each becomes one job array.
struct LabGroup {
  std::string name;               ///< "cpu" or "gpu"
  std::vector<std::string> labs;  ///< lab numbers
  bool gpu = false;
};

/// The labs of `trusted` (labs/NN_topic/), restricted to `wanted` (empty: all), in two groups:
/// those with CUDA sources (*.cu) and the rest. A group with no lab is left out.
std::vector<LabGroup> lab_groups(const fs::path& trusted, const std::vector<std::string>& wanted);

/// One student's results of several groups as one result: labs, scores, files and warnings
/// together (the groups grade disjoint labs of the same submission with the same seed).
GradeResult merge_results(const std::vector<GradeResult>& parts);

/// The text of one array's sbatch file (readable: a TA may adapt it and submit it by hand).
/// `tasks` lists one task per line: id, seed and submission path, separated by tabs.
std::string sbatch_script(const SlurmOptions& slurm, const BatchOptions& batch,
                          const LabGroup& group, const fs::path& tasks, std::size_t task_count,
                          const fs::path& grader);

/// A task in Slurm's queue, as squeue shows it.
struct QueuedTask {
  std::string state;   ///< PENDING, RUNNING, COMPLETING, ...
  std::string reason;  ///< why it waits ("Resources", "Priority", ...; "None" when it runs)
};

/// squeue's lines in the format "%i|%T|%r" (task id, state, reason) as task id -> task.
std::map<std::string, QueuedTask> parse_queue(const std::string& squeue_output);

/// Whether a pending task's reason says that its node could not start it: Slurm then holds it
/// ("launch failed requeued held"), and it never runs without someone releasing it.
bool launch_failed(const std::string& reason);

/// Runs the batch on Slurm (see the file comment). Returns 0 when every submission is graded,
/// kExitLabsNotGraded when some labs could not be graded, kExitSubmissionsNotGraded when some
/// submissions were not (their tasks failed, timed out or were cancelled; a re-run retries them),
/// and 0 with
/// `wait` false once the arrays are submitted. Throws std::runtime_error naming what to install
/// when Slurm's commands are missing.
int batch_slurm(const BatchOptions& batch, const SlurmOptions& slurm, std::ostream& log);

}  // namespace workbook::grade
