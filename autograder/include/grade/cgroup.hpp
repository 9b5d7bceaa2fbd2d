#pragma once
/// \file cgroup.hpp
/// \brief Control groups for the sandbox: each grade gets one (memory, processes and CPU for the
/// whole submission, every process it starts), each sandboxed run a child of it, so that a run, a
/// grade, or a killed grader's leftovers end whole - as container graders do.
///
/// Both hierarchies are supported: cgroup v2 (one unified tree whose cgroup.controllers offers
/// memory, pids and cpu) and cgroup v1 (a tree per controller: memory, pids, cpu, and freezer to
/// stop a tree before killing it). Our folders live below the grader's own cgroup, in a folder
/// named "workbook". Needs root (or a delegated cgroup); cgroup_support() says what this machine
/// offers and why not, and the sandbox then requires it for every isolated run.

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

#include <nlohmann/json_fwd.hpp>

namespace workbook::grade {

/// What a grade may use altogether (every process of the submission at once).
struct GradeLimits {
  std::uint64_t memory_bytes = 8ull << 30;  ///< resident memory, tmpfs pages included
  unsigned processes = 512;                 ///< processes and threads
  double cpus = 0;                        ///< CPU time per wall second; 0: every CPU of the grader
  std::uint64_t work_bytes = 1ull << 30;  ///< size of the work folder (a tmpfs, as root)
};

/// The cgroup hierarchy the grader can use here.
struct CgroupSupport {
  int version = 0;  ///< 0: none usable, 1 or 2
  std::vector<std::string>
      roots;             ///< our folder in each hierarchy (v1: memory, pids, cpu[, freezer])
  bool freezer = false;  ///< a tree can be frozen before it is killed
  std::string note;      ///< why none, or what is missing
  nlohmann::json to_json() const;
};

/// The CPUs this process may run on (a Slurm task's or a container's, not the whole machine's): a
/// grade's CPU limit unless GradeLimits::cpus says otherwise.
double cpus_of_this_process();

/// Found once per process (and our folders created): the grader's own cgroup in /proc/self/cgroup,
/// the mounts in /proc/self/mountinfo.
const CgroupSupport& cgroup_support();

/// A cgroup of ours, `path` relative to our folder ("grade-1a2b/run-3c4d"), in every hierarchy.
/// Creating it throws EnvironmentError when the machine supports cgroups but this one fails.
void cgroup_create(const std::string& path);
/// Sets the limits of a grade's cgroup (memory, pids, CPU).
void cgroup_limit(const std::string& path, const GradeLimits& limits);
/// The files a process writes "0" to, to join the cgroup (one per hierarchy).
std::vector<std::string> cgroup_procs_files(const std::string& path);
/// The processes in the cgroup and below it.
std::vector<pid_t> cgroup_members(const std::string& path);
/// Kills every process in the cgroup and below it (frozen first, where a freezer is), and waits
/// (at most `wait_seconds`) until they are gone. True when none is left.
bool cgroup_kill(const std::string& path, double wait_seconds = 5);
/// cgroup_kill, then removes the folders (children first).
void cgroup_remove(const std::string& path);

/// One grade's cgroup, with its limits, and a reaper: a small process of its own (a fork of the
/// grader, in no process group of the grader's) that kills the cgroup whole when the grader ends,
/// however it ends (SIGKILL included), then unmounts the grade's work folder (`mounted_work`, its
/// tmpfs; "" for none). Does nothing where cgroup_support() found none.
class GradeScope {
 public:
  explicit GradeScope(const GradeLimits& limits, const std::string& mounted_work = "");
  ~GradeScope();  ///< kills what is left in the cgroup and removes it
  GradeScope(const GradeScope&) = delete;
  GradeScope& operator=(const GradeScope&) = delete;
  /// The cgroup for SandboxSpec::cgroup ("" where there is none).
  const std::string& cgroup() const { return path_; }

 private:
  std::string path_;
  pid_t reaper_ = -1;
  int keepalive_ = -1;  // the reaper reads end of file when the grader ends
};

}  // namespace workbook::grade
