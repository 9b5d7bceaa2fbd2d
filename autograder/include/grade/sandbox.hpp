#pragma once
/// \file sandbox.hpp
/// \brief Runs untrusted code (a student's compile, link, tests, kernels) in a child process with
/// limits, and reports how it ended.
///
/// Layers, each required where the machine allows it (isolation() probes them once, `doctor`
/// reports them): a run that cannot set up one of them fails with EnvironmentError, never runs with
/// less isolation. Reported in Isolation:
///   - a wall-clock timeout, and rlimits: CPU time, address space, file size, processes, open
///   files,
///     no core dumps;
///   - an emptied environment (exactly SandboxSpec::env), stdin from /dev/null, every file
///     descriptor closed except those handed over on purpose;
///   - when the grader runs as root, an unprivileged user id (one per grading slot, so parallel
///     jobs cannot signal or trace each other), no supplementary groups, and no_new_privs;
///   - namespaces (as root, or in a user namespace when unprivileged ones are allowed): no network,
///     its own process ids (ending the sandbox's first process ends every process it started), its
///     own IPC, and a jail: a fresh root holding only the system folders, read-only, a private
///     size-capped /tmp, and the paths the spec names; solutions, hidden tests, other students'
///     submissions and the grader's outputs are not in it. Where namespaces come up but the jail
///     cannot be built in them (a container that masks parts of /proc), the probe finds so once,
///     runs go without namespaces, and isolation() says so;
///   - as root, a cgroup per run (cgroup.hpp), inside the grade's cgroup when SandboxSpec::cgroup
///     names one: memory, processes and CPU for the whole grade, and the run killed whole at its
///     end (nothing of it survives, whatever it did to its process group or session);
///   - output capped: the first `output_keep_bytes` are kept, a process printing past
///     `output_kill_bytes` is stopped.
///
/// Process tree: the caller forks a supervisor (trusted code) that creates the namespaces, drains
/// the output and enforces the timeout; it forks an init process (pid 1 of the new pid namespace),
/// which builds the jail and forks the program. The supervisor and the init die with their parent
/// (PR_SET_PDEATHSIG), and so does the program (set after it has become the sandbox user, which
/// clears it), so killing the supervisor ends everything inside, a trusted tool (isolate = false)
/// included.
///
/// Not bubblewrap: see sandbox.cpp for what bwrap cannot do that the grader needs.
///
/// WORKBOOK_GRADE_NAMESPACES=0 turns the namespaces off (to try the degraded layers, or where
/// they misbehave); WORKBOOK_GRADE_UID_BASE moves the sandbox users.
///
/// Call these functions from a single-threaded process (they fork and then allocate).

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/types.h>

#include <nlohmann/json_fwd.hpp>

namespace workbook::grade {

/// The grader's machine failed it (an isolation layer that the machine supports could not be set
/// up for a run, a cgroup, a mount): the run did not happen, and nothing of it is the student's.
/// The grade reports the lab as environment_error and exits non-zero.
struct EnvironmentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The exit code of a trusted helper (the sealed checker, sandbox-exec) that met an
/// EnvironmentError: the grader turns it back into one.
constexpr int kEnvironmentErrorExit = 71;

/// Limits of one sandboxed run.
struct Limits {
  double wall_seconds = 60;
  double cpu_seconds = 60;  ///< per process (RLIMIT_CPU)
  std::uint64_t memory_bytes =
      4ull << 30;  ///< address space per process (RLIMIT_AS; RLIMIT_DATA for GPU runs)
  std::uint64_t file_bytes = 64ull << 20;    ///< largest file it may write (RLIMIT_FSIZE)
  unsigned processes = 64;                   ///< processes and threads of its user (RLIMIT_NPROC)
  unsigned open_files = 256;                 ///< RLIMIT_NOFILE
  std::size_t output_keep_bytes = 64 << 10;  ///< of stdout and stderr together, kept for feedback
  std::uint64_t output_kill_bytes = 256ull << 20;  ///< printing more than this stops the process
  std::uint64_t tmp_bytes = 256ull << 20;          ///< size of the jail's private /tmp
};

/// A path visible inside the jail, at the same place as outside.
struct Mount {
  std::string path;
  bool writable = false;
};

struct SandboxSpec {
  std::vector<std::string> argv;  ///< argv[0]: an absolute path
  std::vector<std::string> env;   ///< the whole environment, "NAME=value"
  std::string cwd;                ///< working folder (must be visible in the jail)
  Limits limits;
  std::vector<Mount> mounts;  ///< besides the system folders (/usr, /etc, /lib*, /bin, /sbin)
  std::string jail_dir;       ///< an empty folder the jail's root is mounted on
  int slot = 0;               ///< selects the unprivileged user id (base + slot) when root
  /// Descriptors of the caller handed to the program as 3, 4, 5, ... in this order; the caller's
  /// copies are closed once the sandbox has started.
  std::vector<int> pass_fds;
  bool isolate = true;  ///< false: limits and environment only (for trusted tools)
  /// A CUDA program: the jail also gets what gpu_access() found (device nodes, driver libraries,
  /// toolkit, CUDA_VISIBLE_DEVICES), and memory is limited by RLIMIT_DATA instead of RLIMIT_AS
  /// (the CUDA driver reserves far more address space than it ever uses: RLIMIT_AS stops it at
  /// start).
  bool gpu = false;
  /// The grade's cgroup (GradeScope::cgroup()): the run gets a cgroup of its own inside it. Empty:
  /// a cgroup of its own at the top of ours, without the grade's limits.
  std::string cgroup;
};

/// What the sandbox can apply on this machine.
struct Isolation {
  bool root = false;  ///< the grader runs as root: the program runs as an unprivileged user
  bool user_namespace = false;   ///< not root, but unprivileged user namespaces are allowed
  bool mount_namespace = false;  ///< the jail
  bool pid_namespace = false;
  bool net_namespace = false;
  bool ipc_namespace = false;
  int cgroup = 0;                  ///< the cgroup version used per grade and run (0: none)
  bool work_quota = false;         ///< the work folder can be a size-limited tmpfs (root)
  uid_t uid_base = 0;              ///< the sandbox user of slot k is uid_base + k (root only)
  std::vector<std::string> notes;  ///< what is missing and what that means
  /// As root, a cgroup per grade and a quota on the work folder belong to it too.
  bool complete() const {
    return (root || user_namespace) && mount_namespace && pid_namespace && net_namespace &&
           (!root || (cgroup != 0 && work_quota));
  }
  nlohmann::json to_json() const;
};

/// Tries each layer once (with /bin/true) and remembers the answer for this process.
const Isolation& isolation();

/// The first user id of the sandbox users when the grader runs as root (WORKBOOK_GRADE_UID_BASE,
/// else 61000). Nothing needs to exist in /etc/passwd for them.
uid_t sandbox_uid_base();

/// How a sandboxed run ended.
struct RunResult {
  bool started = false;
  std::string start_error;  ///< when the program could not be started
  bool exited = false;
  int code = 0;
  int signal = 0;
  bool timed_out = false;
  bool output_flood = false;  ///< stopped for printing more than output_kill_bytes
  double wall_seconds = 0;
  double cpu_seconds = 0;          ///< user + system, the program and everything it started
  std::string output;              ///< stdout and stderr, interleaved, first output_keep_bytes
  std::uint64_t output_bytes = 0;  ///< everything it printed
  unsigned layers = 0;             ///< which namespaces were in force (bit flags, see sandbox.cpp)
  /// A layer the machine supports could not be set up: the program did not run (start_error says
  /// which layer). SandboxProcess::finish() throws EnvironmentError for it.
  bool environment_error = false;

  bool ok() const { return started && exited && code == 0 && !timed_out && !output_flood; }
  /// "exit code 1", "killed by signal 11 (Segmentation fault)", "timed out after 10 s", ...
  std::string describe() const;
  /// output, with a note when it was cut.
  std::string output_with_note() const;
};

/// A sandboxed program that runs while the caller talks to it (through pass_fds).
class SandboxProcess {
 public:
  explicit SandboxProcess(const SandboxSpec& spec);
  ~SandboxProcess();  ///< kills what is still running
  SandboxProcess(const SandboxProcess&) = delete;
  SandboxProcess& operator=(const SandboxProcess&) = delete;

  /// Waits for the end (at most the spec's wall time plus a grace period, or `within` seconds when
  /// given, after which everything is killed), kills what is left in the run's cgroup, and
  /// collects the result. Throws EnvironmentError where an isolation layer could not be set up.
  RunResult finish(double within = -1);
  /// Stops everything inside at once; finish() then reports it.
  void kill();
  pid_t supervisor() const { return supervisor_; }

 private:
  SandboxSpec spec_;
  pid_t supervisor_ = -1;
  int result_fd_ = -1;
  bool killed_ = false;
  std::string cgroup_;  // the run's own, relative to ours (cgroup.hpp)
  std::optional<RunResult> result_;
};

/// Runs a program to its end in the sandbox.
RunResult run_sandboxed(const SandboxSpec& spec);

/// A spec as JSON and back (the grader hands specs to its checkers and launchers this way).
nlohmann::json spec_to_json(const SandboxSpec& spec);
SandboxSpec spec_from_json(const nlohmann::json& j);

/// The environment every sandboxed program gets, plus `extra` ("NAME=value").
std::vector<std::string> clean_environment(const std::vector<std::string>& extra = {});

}  // namespace workbook::grade
