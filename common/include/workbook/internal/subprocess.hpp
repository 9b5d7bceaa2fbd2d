#pragma once
/// \file internal/subprocess.hpp
/// \brief A child process with a private line channel: the perf driver runs the student's and the
/// reference's kernels in workers it talks to, and the autograder runs untrusted code this way.
///
/// The channel is a pair of pipes on the child's file descriptors 3 (it reads commands) and 4 (it
/// writes replies), apart from stdout and stderr, so whatever the code under test prints cannot
/// be mistaken for a reply.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace workbook {

/// A child process started with fork and exec, optionally with the line channel; owns the child
/// (kills and reaps it on destruction), so a worker never outlives the test that started it.
class Subprocess {
 public:
  /// What to run, and how.
  struct Options {
    std::vector<std::string> argv;  ///< argv[0]: the program's path
    bool channel = false;           ///< open the line channel on fds 3 and 4
    /// The child's environment ("NAME=value"); std::nullopt inherits this process's.
    std::optional<std::vector<std::string>> environment;
    /// Descriptors of this process the child gets as fds 5, 6, ... (after the channel's): the perf
    /// driver hands each worker a shared memory for its outputs this way.
    std::vector<int> extra_fds = {};
    /// A cgroup's `cgroup.procs` file the child moves itself into before exec (empty: none), so
    /// that its whole tree, daemons included, stays in that cgroup (see TreeFreezer).
    std::string cgroup_procs = {};
  };

  /// Starts the child. Throws std::runtime_error when the program cannot be started.
  explicit Subprocess(const Options& options);
  ~Subprocess();  ///< kills and reaps a child that is still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }  ///< the child's process id

  /// Sends one line (a newline is added). False when the child has closed its end.
  bool send(const std::string& line);

  /// The outcome of read_line().
  enum class Read {
    line,     ///< a whole line was read (without its newline)
    end,      ///< the child closed its end of the channel (it exited, or crashed)
    timeout,  ///< no whole line within the time allowed
  };
  /// Reads one line from the channel, waiting at most `timeout_seconds`.
  Read read_line(std::string& line, double timeout_seconds);

  /// How a child ended.
  struct Exit {
    bool exited = false;           ///< returned from main / called exit
    int code = 0;                  ///< exit code, when exited
    int signal = 0;                ///< the signal that killed it, otherwise
    std::string describe() const;  ///< "exit code 1", "killed by signal 11 (Segmentation fault)"
  };
  /// Waits for the child to end, at most `timeout_seconds` (negative: for ever).
  std::optional<Exit> wait(double timeout_seconds = -1);
  /// Sends SIGKILL (no effect once reaped).
  void kill();

 private:
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_;
  std::optional<Exit> exit_;
};

/// The processes of a child's tree: the child and every descendant (found by their parents in
/// /proc), plus every process of `cgroup_procs` when given (a daemon re-parented away from the
/// tree stays in its cgroup).
std::vector<pid_t> process_tree(pid_t root, const std::string& cgroup_procs = {});

/// The CPU time (user + system, seconds) of every thread, living or exited, of the processes
/// `pids`, and of their children that they have reaped: what the tree has consumed so far.
double cpu_seconds(const std::vector<pid_t>& pids);

/// The minor page faults so far of process `pid` (all its threads, and the children it reaped):
/// each is a page of memory touched for the first time since it was mapped. 0 once it is gone.
long minor_page_faults(pid_t pid);

/// What a process tree is doing, summed over its processes' threads at one moment: compare two
/// samples to tell a tree asleep (no CPU) from one working (CPU) and from one whose threads keep
/// handing the CPU to each other (CPU, and many context switches).
struct TreeActivity {
  std::size_t threads = 0;  ///< living threads
  double cpu = 0;           ///< CPU seconds used so far (cpu_seconds())
  long switches = 0;        ///< voluntary and involuntary context switches of the living threads
};
TreeActivity tree_activity(const std::vector<pid_t>& pids);

/// Stops every process of a child's tree and resumes it, so that nothing of it runs while another
/// program is timed. It uses the machine's cgroup freezer where this process may create a cgroup
/// (v1 at /sys/fs/cgroup/freezer, else v2's cgroup.freeze beside this process's own cgroup), and
/// SIGSTOP / SIGCONT of each process otherwise, and for any process of the tree that left the
/// cgroup.
class TreeFreezer {
 public:
  /// How the tree is stopped.
  enum class Method { cgroup_v1, cgroup_v2, signals };
  /// Every cgroup a TreeFreezer makes is named with this prefix: a process that finds itself in
  /// one (a program started by a frozen child, such as the grader's sandbox launcher) knows that
  /// the cgroup it belongs to is the one above.
  static constexpr const char* kCgroupPrefix = "workbook-freezer-";
  /// Creates a cgroup of its own when the machine lets this process (`name` names it); the child
  /// must join it (Subprocess::Options::cgroup_procs = cgroup_procs()) before attach().
  explicit TreeFreezer(const std::string& name);
  ~TreeFreezer();  ///< resumes the tree and removes the cgroup (once its processes are gone)
  TreeFreezer(const TreeFreezer&) = delete;
  TreeFreezer& operator=(const TreeFreezer&) = delete;

  /// The `cgroup.procs` the child joins (empty: signals only).
  const std::string& cgroup_procs() const { return procs_; }
  /// The tree to control: `root`'s.
  void attach(pid_t root) { root_ = root; }
  /// The processes of the tree now.
  std::vector<pid_t> pids() const { return process_tree(root_, procs_); }
  /// The tree's CPU time so far (see cpu_seconds()).
  double cpu() const { return cpu_seconds(pids()); }
  /// Stops the whole tree and returns once every process of it is stopped (at most `timeout`
  /// seconds; throws std::runtime_error beyond, or when a process cannot be stopped).
  void freeze(double timeout = 5);
  /// Resumes whatever freeze() stopped.
  void thaw();
  bool frozen() const { return frozen_; }
  Method method() const { return method_; }
  /// "the cgroup v1 freezer", "the cgroup v2 freezer" or "SIGSTOP of every process".
  std::string describe() const;

 private:
  Method method_ = Method::signals;
  std::string dir_, procs_;
  pid_t root_ = -1;
  bool frozen_ = false;
  std::vector<pid_t> signalled_;  // stopped with SIGSTOP by the last freeze()
};

}  // namespace workbook
