// The sandbox: a supervisor process (trusted) that makes namespaces, drains output and enforces the
// timeout; an init process that builds the jail; the program, with limits, as an unprivileged user.
//
// Why not bubblewrap (bwrap 0.8.0 does the namespaces, binds and pid-1 init as well as this file
// does): as root it cannot make the program another user on the host (--uid needs --unshare-user,
// which maps the chosen id onto root itself, so the program could read the grader's root-only files
// and what it writes is root's); it reports a death by signal n as exit code 128 + n and a program
// that cannot start as exit code 1; and as root without CAP_SYS_ADMIN (a container) it starts only
// through a user namespace (root on the host again), not at all where those are off, where this
// sandbox still runs the program as the sandbox user with its limits. The first two would need a
// second trusted program inside its jail, and the third our own path anyway, so the jail stays
// here.
#include <grade/sandbox.hpp>

#include <grade/cgroup.hpp>
#include <grade/gpu_access.hpp>
#include <grade/util.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

using Clock = std::chrono::steady_clock;

// Namespaces in force, as reported in RunResult::layers.
enum Layer : unsigned {
  kUser = 1,
  kMount = 2,
  kPid = 4,
  kNet = 8,
  kIpc = 16,
  kUts = 32,
  kUid = 64,  // ran as the unprivileged sandbox user (root only)
};

constexpr std::uint32_t kMagic = 0x5742474Bu;  // "WBGK"

// What the supervisor sends back, followed by `kept` bytes of output.
struct Header {
  std::uint32_t magic = kMagic;
  std::int32_t started = 0;
  std::int32_t exited = 0;
  std::int32_t code = 0;
  std::int32_t signal = 0;
  std::int32_t timed_out = 0;
  std::int32_t flood = 0;
  std::int32_t environment_error = 0;
  std::uint32_t layers = 0;
  double wall = 0;
  double cpu = 0;
  std::uint64_t output_bytes = 0;
  std::uint64_t kept = 0;
  char start_error[512] = {};
};

// A path of the jail, prepared before fork.
struct JailEntry {
  enum Kind { dir_bind, file_bind, symlink, tmpfs, proc, dev_file } kind;
  std::string source, target, link;  // target: inside the jail folder
  bool writable = false;
  std::string options;  // tmpfs
};

// Everything the children need, computed before fork (after fork only simple calls follow).
struct Plan {
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
  std::string cwd;
  Limits limits;
  std::vector<JailEntry> jail;
  std::string jail_dir;
  bool isolate = true;
  bool namespaces = true;  // WORKBOOK_GRADE_NAMESPACES=0: none (to try the degraded layers, or
                           // where they misbehave)
  bool root = false;
  uid_t uid = 0;
  gid_t gid = 0;
  uid_t outer_uid = 0;
  gid_t outer_gid = 0;
  std::vector<int> pass_fds;
  unsigned nproc_extra = 0;  // processes the user already has (no user separation)
  bool gpu = false;
  std::vector<gid_t> groups;  // supplementary groups of the sandbox user (a GPU's device nodes)
  unsigned required = 0;      // the namespaces the probe found: a run without one of them fails
  std::vector<std::string> cgroup_procs;  // the run's cgroup: the init joins it first
};

bool write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_text(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write_all(fd, text.data(), text.size());
  close(fd);
  return ok;
}

// Reports a setup failure of the init or the program to the supervisor, then exits. A failure to
// set up isolation (the jail, the cgroup, the user) is the machine's, marked with a leading '!';
// one to start the program (no such file, no such folder) is the run's.
[[noreturn]] void die(int error_fd, const std::string& what, int err, bool isolation = true) {
  const std::string message = (isolation ? "!" : "") + what + ": " + std::strerror(err);
  (void)!write(error_fd, message.data(), std::min<std::size_t>(message.size(), 500));
  _exit(126);
}

void mkdirs(const std::string& path) {
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') mkdir(path.substr(0, i).c_str(), 0755);
  }
}

// The flags a read-only remount of a bind mount of `source` must keep (locked flags otherwise
// make the remount fail inside a user namespace).
unsigned long kept_flags(const std::string& source) {
  struct statvfs s;
  unsigned long flags = 0;
  if (statvfs(source.c_str(), &s) != 0) return flags;
  if (s.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (s.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (s.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (s.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (s.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (s.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

// In the init process, inside the new mount namespace: a tmpfs root with the planned entries,
// then pivot_root into it. The old root is detached: nothing outside the jail remains reachable.
void build_jail(const Plan& plan, bool pid_namespace, int error_fd) {
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    die(error_fd, "making / private", errno);
  if (mount("workbook-jail", plan.jail_dir.c_str(), "tmpfs", MS_NOSUID, "mode=0755,size=16m") != 0)
    die(error_fd, "mounting the jail on " + plan.jail_dir, errno);
  for (const JailEntry& e : plan.jail) {
    const std::string target = plan.jail_dir + e.target;
    switch (e.kind) {
      case JailEntry::symlink: {
        const auto slash = target.rfind('/');
        mkdirs(target.substr(0, slash));
        if (::symlink(e.link.c_str(), target.c_str()) != 0 && errno != EEXIST)
          die(error_fd, "symlink " + e.target, errno);
        break;
      }
      case JailEntry::tmpfs:
        mkdirs(target);
        if (mount("tmpfs", target.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, e.options.c_str()) != 0)
          die(error_fd, "mounting a tmpfs on " + e.target, errno);
        break;
      case JailEntry::proc:
        mkdirs(target);
        if (pid_namespace) {
          if (mount("proc", target.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
            die(error_fd, "mounting /proc", errno);
        } else if (mount("/proc", target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
          die(error_fd, "binding /proc", errno);
        }
        break;
      case JailEntry::dev_file:
      case JailEntry::file_bind:
      case JailEntry::dir_bind: {
        if (e.kind == JailEntry::dir_bind) {
          mkdirs(target);
        } else {
          mkdirs(target.substr(0, target.rfind('/')));
          const int fd = open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
          if (fd >= 0) close(fd);
        }
        // Recursive: what is mounted below the folder (a driver's libraries under /usr, as
        // container toolkits and clusters mount them, single files included) is visible too, and
        // read-only too.
        if (mount(e.source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
          die(error_fd, "binding " + e.source, errno);
        if (!e.writable && e.kind != JailEntry::dev_file) {
          mount_attr attr{};
          attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID;
          if (mount_setattr(AT_FDCWD, target.c_str(), AT_RECURSIVE, &attr, sizeof attr) != 0) {
            // Before Linux 5.12: the folder's own mount only.
            const unsigned long flags =
                MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | kept_flags(e.source);
            if (mount(nullptr, target.c_str(), nullptr, flags, nullptr) != 0)
              die(error_fd, "making " + e.source + " read-only", errno);
          }
        }
        break;
      }
    }
  }
  if (chdir(plan.jail_dir.c_str()) != 0) die(error_fd, "entering the jail", errno);
  // pivot_root(".", ".") stacks the old root on the new one; detaching it leaves only the jail.
  if (syscall(SYS_pivot_root, ".", ".") != 0) die(error_fd, "pivot_root", errno);
  if (umount2(".", MNT_DETACH) != 0) die(error_fd, "detaching the old root", errno);
  if (chdir("/") != 0) die(error_fd, "chdir /", errno);
}

void set_limit(int resource, rlim_t value, rlim_t hard_extra = 0) {
  struct rlimit r {
    value, value + hard_extra
  };
  setrlimit(resource, &r);
}

// Closes every descriptor except those in `keep` (sorted here).
void close_all_except(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  unsigned next = 0;
  for (int fd : keep) {
    if (fd < 0) continue;
    if (static_cast<unsigned>(fd) > next) close_range(next, static_cast<unsigned>(fd) - 1, 0);
    next = static_cast<unsigned>(fd) + 1;
  }
  close_range(next, ~0u, 0);
}

// The program's process: descriptors, limits, user, then exec.
[[noreturn]] void exec_program(const Plan& plan, unsigned layers, int out_fd, int error_fd,
                               pid_t init) {
  // Out of the way first: the error pipe (close-on-exec, it reports a failed exec) and the
  // handed-over descriptors, which may sit where they must go.
  int above = std::max({3 + static_cast<int>(plan.pass_fds.size()), error_fd + 1, out_fd + 1});
  for (int fd : plan.pass_fds) above = std::max(above, fd + 1);
  const int error_sink = fcntl(error_fd, F_DUPFD_CLOEXEC, above);
  if (error_sink < 0) die(error_fd, "moving the error pipe", errno);
  std::vector<int> high;
  for (int fd : plan.pass_fds) high.push_back(fcntl(fd, F_DUPFD, above));
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0) die(error_sink, "opening /dev/null", errno);
  dup2(null_fd, 0);
  dup2(out_fd, 1);
  dup2(out_fd, 2);
  std::vector<int> keep = {0, 1, 2, error_sink};
  for (std::size_t i = 0; i < high.size(); ++i) {
    dup2(high[i], 3 + static_cast<int>(i));
    keep.push_back(3 + static_cast<int>(i));
  }
  close_all_except(keep);

  // Default signal handling: dispositions set to "ignore" by the grader would survive exec.
  for (int s = 1; s < NSIG; ++s) std::signal(s, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  if (chdir(plan.cwd.c_str()) != 0) die(error_sink, "entering " + plan.cwd, errno, false);
  const Limits& l = plan.limits;
  set_limit(RLIMIT_CPU, static_cast<rlim_t>(std::max(1.0, l.cpu_seconds)),
            1);  // SIGXCPU, then SIGKILL
  // The CUDA driver reserves address space for the whole GPU memory and more at start: under
  // RLIMIT_AS it cannot start. RLIMIT_DATA counts what a process really allocates (heap and
  // private writable mappings), not reservations, so a GPU program is limited by that instead.
  set_limit(plan.gpu ? RLIMIT_DATA : RLIMIT_AS, l.memory_bytes);
  set_limit(RLIMIT_FSIZE, l.file_bytes);
  set_limit(RLIMIT_NOFILE, l.open_files);
  set_limit(RLIMIT_CORE, 0);
  if (plan.isolate && (plan.root || (layers & kUser))) {
    set_limit(RLIMIT_NPROC, l.processes);
  } else if (plan.isolate) {
    set_limit(RLIMIT_NPROC, l.processes + plan.nproc_extra);  // the user's own processes count too
  }
  if (plan.root && plan.isolate) {
    if (setgroups(plan.groups.size(), plan.groups.data()) != 0) die(error_sink, "setgroups", errno);
    if (setresgid(plan.gid, plan.gid, plan.gid) != 0) die(error_sink, "setresgid", errno);
    if (setresuid(plan.uid, plan.uid, plan.uid) != 0) die(error_sink, "setresuid", errno);
  }
  // The program dies with the init (and so with the supervisor and the grader), wherever no pid
  // namespace does it: a trusted tool's children (the sealed checker's worker) included. Set after
  // the change of user, which clears it.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die(error_sink, "PR_SET_PDEATHSIG", errno);
  if (getppid() != init) _exit(126);
  if (layers & kUser) {
    // In the user namespace we hold every capability until exec; drop the bounding set too.
    for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  }
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  die(error_sink, std::string("cannot run ") + plan.argv[0], errno, false);
}

// pid 1 of the new pid namespace (or a plain middle process without one): builds the jail, starts
// the program, reaps everything, and reports the program's status.
[[noreturn]] void init_process(const Plan& plan, unsigned layers, int out_fd, int status_fd,
                               int error_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  setpgid(0, 0);
  std::vector<int> keep = {0, 1, 2, out_fd, status_fd, error_fd};
  keep.insert(keep.end(), plan.pass_fds.begin(), plan.pass_fds.end());
  close_all_except(keep);
  // The run's cgroup, before anything else starts: every process of the run is in it.
  for (const std::string& procs : plan.cgroup_procs) {
    const int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) die(error_fd, "joining the cgroup " + procs, errno);
    close(fd);
  }
  if (layers & kMount) build_jail(plan, layers & kPid, error_fd);
  const pid_t self = getpid();
  const pid_t program = fork();
  if (program < 0) die(error_fd, "fork", errno, false);  // the grade's own process limit
  if (program == 0) exec_program(plan, layers, out_fd, error_fd, self);
  close(out_fd);
  close(error_fd);
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(-1, &status, 0);
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) _exit(0);
    if (done == program) {
      (void)!write(status_fd, &status, sizeof status);
      _exit(0);  // in a pid namespace, the init's end ends every process left in it
    }
  }
}

// Kills every process of the sandbox user (root, without a pid namespace to do it for us).
void sweep_user(uid_t uid) {
  const pid_t p = fork();
  if (p == 0) {
    if (setresuid(uid, uid, uid) == 0) kill(-1, SIGKILL);
    _exit(0);
  }
  if (p > 0) waitpid(p, nullptr, 0);
}

unsigned try_namespaces(const Plan& plan) {
  unsigned layers = 0;
  if (!plan.isolate || !plan.namespaces) return 0;
  if (!plan.root) {
    if (unshare(CLONE_NEWUSER) != 0) return 0;
    layers |= kUser;
    write_text("/proc/self/setgroups", "deny");
    // Inside, the program is uid 1000, not 0: exec drops every capability of a non-root user.
    if (!write_text("/proc/self/uid_map", "1000 " + std::to_string(plan.outer_uid) + " 1\n") ||
        !write_text("/proc/self/gid_map", "1000 " + std::to_string(plan.outer_gid) + " 1\n"))
      return layers;
  }
  const std::pair<int, unsigned> each[] = {{CLONE_NEWNS, kMount},
                                           {CLONE_NEWPID, kPid},
                                           {CLONE_NEWNET, kNet},
                                           {CLONE_NEWIPC, kIpc},
                                           {CLONE_NEWUTS, kUts}};
  int all = 0;
  for (const auto& [flag, layer] : each) all |= flag;
  if (unshare(all) == 0) {
    for (const auto& [flag, layer] : each) layers |= layer;
    return layers;
  }
  // Only the probe takes them one by one, to find which this machine allows; a run either gets
  // every layer the probe found or does not run (see supervise).
  if (plan.required == 0)
    for (const auto& [flag, layer] : each)
      if (unshare(flag) == 0) layers |= layer;
  return layers;
}

// The supervisor: runs in the child of the caller.
[[noreturn]] void supervise(const Plan& plan, int result_fd, pid_t parent) {
  setsid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  // Only what this sandbox needs: other pipes of the caller must not be held open here.
  std::vector<int> keep = {0, 1, 2, result_fd};
  keep.insert(keep.end(), plan.pass_fds.begin(), plan.pass_fds.end());
  close_all_except(keep);
  std::signal(SIGPIPE, SIG_IGN);
  const auto start = Clock::now();
  Header h;
  std::string kept;

  errno = 0;
  unsigned layers = try_namespaces(plan);
  const int why = errno;
  // The jail needs its own mount namespace and a folder to mount on.
  if (plan.jail_dir.empty()) layers &= ~static_cast<unsigned>(kMount);
  if (plan.root && plan.isolate) layers |= kUid;
  if ((layers & plan.required) != plan.required) {
    // Never a run with less isolation than the machine offers (a worker outside the jail, in the
    // host's namespaces, can read what the grader can): the machine's failure, reported as such.
    h.environment_error = 1;
    const std::string text =
        "isolation: could not create the namespaces that isolation() found "
        "on this machine (unshare: " +
        std::string(std::strerror(why)) + "; too many at once? see user.max_*_namespaces)";
    std::memcpy(h.start_error, text.data(), std::min(text.size(), sizeof h.start_error - 1));
    h.layers = layers;
    write_all(result_fd, &h, sizeof h);
    _exit(0);
  }

  int out[2], status[2], error[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0 || pipe2(error, O_CLOEXEC) != 0)
    _exit(2);
  const pid_t init = fork();
  if (init < 0) _exit(3);
  if (init == 0) {
    close(out[0]);
    close(status[0]);
    close(error[0]);
    close(result_fd);
    // The program's end of the output pipe must survive exec.
    const int out_w = fcntl(out[1], F_DUPFD, 10);
    close(out[1]);
    init_process(plan, layers, out_w, status[1], error[1]);
  }
  close(out[1]);
  close(status[1]);
  close(error[1]);
  fcntl(out[0], F_SETFL, O_NONBLOCK);

  const auto deadline = start + std::chrono::duration<double>(plan.limits.wall_seconds);
  // A descriptor that becomes readable when the init ends: no polling delay (Linux 5.3+).
  const int init_fd = static_cast<int>(syscall(SYS_pidfd_open, init, 0));
  bool init_done = false, eof = false;
  int init_status = 0;
  struct rusage usage {};
  Clock::time_point linger_until{};
  char buffer[65536];
  for (;;) {
    const auto now = Clock::now();
    if (!init_done && now >= deadline) {
      h.timed_out = 1;
      kill(-init, SIGKILL);
      kill(init, SIGKILL);
    }
    pollfd p[2] = {{eof ? -1 : out[0], POLLIN, 0}, {init_done ? -1 : init_fd, POLLIN, 0}};
    if (init_fd >= 0 || !eof)
      poll(p, 2, 20);
    else
      usleep(5000);
    for (;;) {
      if (eof) break;
      const ssize_t n = read(out[0], buffer, sizeof buffer);
      if (n > 0) {
        h.output_bytes += static_cast<std::uint64_t>(n);
        if (kept.size() < plan.limits.output_keep_bytes)
          kept.append(buffer, std::min<std::size_t>(static_cast<std::size_t>(n),
                                                    plan.limits.output_keep_bytes - kept.size()));
        if (h.output_bytes > plan.limits.output_kill_bytes && !h.flood) {
          h.flood = 1;
          kill(-init, SIGKILL);
          kill(init, SIGKILL);
        }
        continue;
      }
      if (n == 0) eof = true;
      break;
    }
    if (!init_done) {
      const pid_t r = wait4(init, &init_status, WNOHANG, &usage);
      if (r == init) {
        init_done = true;
        // Whatever the program left behind dies with it.
        kill(-init, SIGKILL);
        if (plan.root && plan.isolate && !(layers & kPid)) sweep_user(plan.uid);
        linger_until = Clock::now() + std::chrono::milliseconds(500);
      }
    }
    if (init_done && (eof || Clock::now() >= linger_until)) break;
  }

  int program_status = 0;
  const bool have_status =
      read(status[0], &program_status, sizeof program_status) == sizeof program_status;
  char error_text[512] = {};
  const ssize_t error_len = read(error[0], error_text, sizeof error_text - 1);
  h.layers = layers;
  h.wall = std::chrono::duration<double>(Clock::now() - start).count();
  h.cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
          1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  if (error_len > 0) {
    const bool machine = error_text[0] == '!';
    h.environment_error = machine;
    std::memcpy(h.start_error, error_text + machine, static_cast<std::size_t>(error_len - machine));
  } else {
    h.started = 1;
    if (have_status) {
      if (WIFEXITED(program_status)) {
        h.exited = 1;
        h.code = WEXITSTATUS(program_status);
      } else if (WIFSIGNALED(program_status)) {
        h.signal = WTERMSIG(program_status);
      }
    } else {
      h.signal = SIGKILL;  // stopped by us (timeout, output flood)
    }
  }
  h.kept = kept.size();
  write_all(result_fd, &h, sizeof h);
  write_all(result_fd, kept.data(), kept.size());
  _exit(0);
}

// The system folders every jail has, read-only, as they are on this machine (merged /usr or not).
void add_system_paths(std::vector<JailEntry>& jail) {
  for (const char* path : kSystemFolders) {
    struct stat s;
    if (lstat(path, &s) != 0) continue;
    if (S_ISLNK(s.st_mode)) {
      char link[4096];
      const ssize_t n = readlink(path, link, sizeof link - 1);
      if (n <= 0) continue;
      jail.push_back(
          {JailEntry::symlink, "", path, std::string(link, static_cast<std::size_t>(n))});
    } else if (S_ISDIR(s.st_mode)) {
      jail.push_back({JailEntry::dir_bind, path, path, ""});
    }
  }
  for (const char* dev : {"null", "zero", "full", "random", "urandom"}) {
    const std::string path = std::string("/dev/") + dev;
    jail.push_back({JailEntry::dev_file, path, path, "", true});
  }
  jail.push_back({JailEntry::symlink, "", "/dev/fd", "/proc/self/fd"});
  jail.push_back({JailEntry::symlink, "", "/dev/stdin", "/proc/self/fd/0"});
  jail.push_back({JailEntry::symlink, "", "/dev/stdout", "/proc/self/fd/1"});
  jail.push_back({JailEntry::symlink, "", "/dev/stderr", "/proc/self/fd/2"});
  jail.push_back({JailEntry::proc, "", "/proc", ""});
  if (access("/sys", F_OK) == 0) jail.push_back({JailEntry::dir_bind, "/sys", "/sys", ""});
}

// Set by the probe of isolation() where namespaces come up but a jail cannot be built in them (a
// container that masks parts of /proc forbids mounting a new one): every run then goes without
// namespaces, with the limits, as isolation() reports, instead of failing to start.
bool jail_unbuildable = false;
bool probing = false;
unsigned probed_layers = 0;  // the namespaces the probe's run got

unsigned count_own_processes() {
  unsigned n = 0;
  const uid_t me = getuid();
  if (auto* dir = opendir("/proc")) {
    while (auto* e = readdir(dir)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      struct stat s;
      if (stat((std::string("/proc/") + e->d_name).c_str(), &s) == 0 && s.st_uid == me) ++n;
    }
    closedir(dir);
  }
  return n;
}

Plan make_plan(const SandboxSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty() || spec.argv[0][0] != '/')
    throw std::invalid_argument("sandbox: argv[0] must be an absolute path");
  Plan plan;
  plan.argv_storage = spec.argv;
  plan.env_storage = spec.env;
  plan.gpu = spec.gpu;
  const GpuAccess* gpu = spec.gpu && spec.isolate ? &gpu_access() : nullptr;
  if (gpu) {
    for (const std::string& e : gpu->env) {
      const std::string name = e.substr(0, e.find('=') + 1);
      const bool set = std::any_of(plan.env_storage.begin(), plan.env_storage.end(),
                                   [&](const std::string& x) { return x.rfind(name, 0) == 0; });
      if (!set) plan.env_storage.push_back(e);
    }
    plan.groups = gpu->groups;
  }
  for (std::string& a : plan.argv_storage) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  for (std::string& e : plan.env_storage) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  plan.cwd = spec.cwd.empty() ? "/" : spec.cwd;
  plan.limits = spec.limits;
  plan.isolate = spec.isolate;
  const char* namespaces = std::getenv("WORKBOOK_GRADE_NAMESPACES");
  plan.namespaces = !(namespaces && std::string_view(namespaces) == "0");
  if (plan.namespaces && spec.isolate) {
    if (!probing) isolation();  // probes once: it may find that a jail cannot be built here
    plan.namespaces = !jail_unbuildable;
    // Every namespace the probe found is required (the jail only where the spec has a folder for
    // it).
    if (!probing && plan.namespaces) {
      plan.required = probed_layers & (kUser | kMount | kPid | kNet | kIpc | kUts);
      if (spec.jail_dir.empty()) plan.required &= ~static_cast<unsigned>(kMount);
    }
  }
  plan.root = geteuid() == 0;
  plan.uid = sandbox_uid_base() + static_cast<uid_t>(spec.slot);
  plan.gid = static_cast<gid_t>(plan.uid);
  plan.outer_uid = getuid();
  plan.outer_gid = getgid();
  plan.pass_fds = spec.pass_fds;
  if (spec.isolate && !plan.root) plan.nproc_extra = count_own_processes();
  if (spec.isolate && !spec.jail_dir.empty()) {
    plan.jail_dir = spec.jail_dir;
    add_system_paths(plan.jail);
    plan.jail.push_back({JailEntry::tmpfs, "", "/tmp", "", true,
                         "mode=1777,size=" + std::to_string(spec.limits.tmp_bytes)});
    std::vector<Mount> mounts = spec.mounts;
    if (gpu) {
      for (const std::string& folder : gpu->libraries) mounts.push_back({folder, false});
      for (const std::string& folder : gpu->toolkit) mounts.push_back({folder, false});
      for (const std::string& node : gpu->devices) {
        struct stat s;
        if (stat(node.c_str(), &s) != 0) continue;
        // Device nodes as they are (a read-only mount would not stop a device's ioctls anyway).
        plan.jail.push_back(
            {S_ISDIR(s.st_mode) ? JailEntry::dir_bind : JailEntry::dev_file, node, node, "", true});
      }
    }
    std::sort(mounts.begin(), mounts.end(),
              [](const Mount& a, const Mount& b) { return a.path.size() < b.path.size(); });
    for (const Mount& m : mounts) {
      struct stat s;
      if (stat(m.path.c_str(), &s) != 0) continue;
      plan.jail.push_back({S_ISDIR(s.st_mode) ? JailEntry::dir_bind : JailEntry::file_bind, m.path,
                           m.path, "", m.writable});
    }
  }
  return plan;
}

RunResult decode(const Header& h, std::string output) {
  RunResult r;
  r.started = h.started != 0;
  r.start_error = h.start_error;
  r.exited = h.exited != 0;
  r.code = h.code;
  r.signal = h.signal;
  r.timed_out = h.timed_out != 0;
  r.output_flood = h.flood != 0;
  r.wall_seconds = h.wall;
  r.cpu_seconds = h.cpu;
  r.output_bytes = h.output_bytes;
  r.output = std::move(output);
  r.layers = h.layers;
  r.environment_error = h.environment_error != 0;
  return r;
}

std::string format_seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s < 10 ? "%.1f" : "%.0f", s);
  return text;
}

}  // namespace

uid_t sandbox_uid_base() {
  if (const char* v = std::getenv("WORKBOOK_GRADE_UID_BASE"))
    return static_cast<uid_t>(std::strtoul(v, nullptr, 10));
  return 61000;
}

std::vector<std::string> clean_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                  "HOME=/tmp",
                                  "TMPDIR=/tmp",
                                  "LANG=C.UTF-8",
                                  "LC_ALL=C.UTF-8",
                                  "TERM=dumb",
                                  "GTEST_COLOR=no",
                                  "MALLOC_ARENA_MAX=2"};
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::string RunResult::describe() const {
  if (environment_error) return "could not be isolated (the grader's machine): " + start_error;
  if (!started) return "could not start: " + start_error;
  if (timed_out)
    return "timed out after " + format_seconds(wall_seconds) +
           " s (an endless loop, or far too slow)";
  if (output_flood)
    return "stopped after printing " + std::to_string(output_bytes >> 20) + " MiB of output";
  if (exited) return "exit code " + std::to_string(code);
  std::string text = "killed by signal " + std::to_string(signal);
  if (const char* name = strsignal(signal)) text += std::string(" (") + name + ")";
  if (signal == SIGXCPU) text += ": it used up its CPU time";
  if (signal == SIGXFSZ) text += ": it wrote a file larger than allowed";
  return text;
}

std::string RunResult::output_with_note() const {
  std::string text = output;
  if (output_bytes > output.size())
    text += "\n[... " + std::to_string(output_bytes - output.size()) +
            " more bytes of output not kept]\n";
  return text;
}

nlohmann::json Isolation::to_json() const {
  return {{"root", root},
          {"user_namespace", user_namespace},
          {"jail", mount_namespace},
          {"pid_namespace", pid_namespace},
          {"no_network", net_namespace},
          {"ipc_namespace", ipc_namespace},
          {"cgroup", cgroup_support().to_json()},
          {"work_quota", work_quota},
          {"uid_base", uid_base},
          {"complete", complete()},
          {"notes", notes}};
}

const Isolation& isolation() {
  static const Isolation probed = [] {
    Isolation i;
    i.root = geteuid() == 0;
    i.uid_base = sandbox_uid_base();
    char dir[] = "/tmp/workbook-jail-probe-XXXXXX";
    const bool have_dir = mkdtemp(dir) != nullptr;
    SandboxSpec spec;
    spec.argv = {"/bin/true"};
    spec.env = clean_environment();
    spec.limits.wall_seconds = 20;
    if (have_dir) spec.jail_dir = dir;
    probing = true;
    RunResult r = run_sandboxed(spec);
    std::string jail_error;
    if (!r.started && r.layers != 0) {
      // The namespaces came up, the jail did not: try without them.
      jail_error = r.start_error;
      jail_unbuildable = true;
      r = run_sandboxed(spec);
      if (!r.started) jail_unbuildable = false;
    }
    probing = false;
    if (have_dir) rmdir(dir);
    if (jail_unbuildable)
      i.notes.push_back(
          "namespaces are allowed but the jail cannot be built in them (" + jail_error +
          "; a container that masks parts of /proc does this): every run goes without namespaces.");
    const unsigned layers = r.ok() ? r.layers : 0;
    probed_layers = layers;
    i.cgroup = cgroup_support().version;
    if (i.cgroup == 0)
      i.notes.push_back("no cgroup: " + cgroup_support().note +
                        "; a grade's processes are not limited together, and leftovers are killed "
                        "by namespace, group and user only.");
    if (i.root) {
      // The work folder under a quota: a size-limited tmpfs mounted on it (Workspace).
      char quota_dir[] = "/tmp/workbook-quota-probe-XXXXXX";
      if (mkdtemp(quota_dir)) {
        i.work_quota =
            mount("workbook-quota-probe", quota_dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") == 0;
        if (i.work_quota) umount2(quota_dir, MNT_DETACH);
        rmdir(quota_dir);
      }
    }
    if (!i.work_quota)
      i.notes.push_back(
          "no quota on the work folder (it needs root and tmpfs mounts): a submission may fill "
          "its disk up to the per-file limit times the processes.");
    i.user_namespace = layers & kUser;
    i.mount_namespace = (layers & kMount) && have_dir;
    i.pid_namespace = layers & kPid;
    i.net_namespace = layers & kNet;
    i.ipc_namespace = layers & kIpc;
    if (!r.ok() && r.started) i.notes.push_back("the probe run failed: " + r.describe());
    if (!r.started) i.notes.push_back("the probe could not start: " + r.start_error);
    if (!i.root && !i.user_namespace && !jail_unbuildable)
      i.notes.push_back(
          "not root and no user namespaces: student code runs as the grader's own user and "
          "can read what the grader can (solutions, hidden tests). Grade as root, or allow "
          "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1).");
    if (!i.mount_namespace)
      i.notes.push_back(
          "no mount namespace: no jail. Secrets are protected by file permissions only "
          "(as root: they are readable by root alone), other paths are visible.");
    if (!i.net_namespace)
      i.notes.push_back("no network namespace: student code can reach the network.");
    if (!i.pid_namespace)
      i.notes.push_back("no pid namespace: leftover processes are killed by process group" +
                        std::string(i.root ? " and by user id."
                                           : " only (a process that leaves its group survives)."));
    return i;
  }();
  return probed;
}

SandboxProcess::SandboxProcess(const SandboxSpec& spec) : spec_(spec) {
  Plan plan = make_plan(spec);
  if (spec.isolate && cgroup_support().version != 0) {
    cgroup_ = (spec.cgroup.empty() ? "" : spec.cgroup + "/") + "run-" + random_hex(6);
    cgroup_create(cgroup_);  // throws EnvironmentError: never a run without it
    plan.cgroup_procs = cgroup_procs_files(cgroup_);
  }
  int result[2];
  if (pipe2(result, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t parent = getpid();
  supervisor_ = fork();
  if (supervisor_ < 0) {
    close(result[0]);
    close(result[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (supervisor_ == 0) {
    close(result[0]);
    supervise(plan, result[1], parent);
  }
  close(result[1]);
  result_fd_ = result[0];
  for (int fd : spec.pass_fds) close(fd);
}

SandboxProcess::~SandboxProcess() {
  if (!result_) {
    kill();
    try {
      finish();
    } catch (const std::exception&) {
    }
  }
  if (!cgroup_.empty()) cgroup_remove(cgroup_);
  if (result_fd_ >= 0) close(result_fd_);
}

void SandboxProcess::kill() {
  if (!result_ && supervisor_ > 0) {
    ::kill(supervisor_, SIGKILL);  // the init and the program die with it (PR_SET_PDEATHSIG)
    killed_ = true;
  }
}

RunResult SandboxProcess::finish(double within) {
  if (result_) return *result_;
  const double wait = within >= 0 ? within : spec_.limits.wall_seconds + 30;
  const auto deadline = Clock::now() + std::chrono::duration<double>(wait);
  std::string data;
  char buffer[65536];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 && !killed_) {
      kill();  // the supervisor dies; reading on gives end of file
      continue;
    }
    pollfd p{result_fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = read(result_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  int status = 0;
  while (waitpid(supervisor_, &status, 0) < 0 && errno == EINTR) {
  }
  // Whatever the run left (a daemon that left its session, its group and, without a pid
  // namespace, its parent) dies with its cgroup.
  if (!cgroup_.empty()) {
    cgroup_remove(cgroup_);
    cgroup_.clear();
  }
  Header h;
  if (data.size() >= sizeof h) {
    std::memcpy(&h, data.data(), sizeof h);
  }
  if (data.size() < sizeof h || h.magic != kMagic) {
    RunResult r;
    r.started = true;
    r.signal = SIGKILL;
    r.timed_out = killed_;
    r.wall_seconds = spec_.limits.wall_seconds;
    result_ = r;
    return r;
  }
  result_ = decode(h, data.substr(sizeof h, h.kept));
  if (result_->environment_error && !probing)
    throw EnvironmentError("the sandbox " + result_->describe());
  return *result_;
}

nlohmann::json spec_to_json(const SandboxSpec& s) {
  nlohmann::json mounts = nlohmann::json::array();
  for (const Mount& m : s.mounts) mounts.push_back({{"path", m.path}, {"writable", m.writable}});
  const Limits& l = s.limits;
  return {{"argv", s.argv},
          {"env", s.env},
          {"cwd", s.cwd},
          {"mounts", mounts},
          {"jail_dir", s.jail_dir},
          {"slot", s.slot},
          {"isolate", s.isolate},
          {"gpu", s.gpu},
          {"cgroup", s.cgroup},
          {"limits",
           {{"wall_seconds", l.wall_seconds},
            {"cpu_seconds", l.cpu_seconds},
            {"memory_bytes", l.memory_bytes},
            {"file_bytes", l.file_bytes},
            {"processes", l.processes},
            {"open_files", l.open_files},
            {"output_keep_bytes", l.output_keep_bytes},
            {"output_kill_bytes", l.output_kill_bytes},
            {"tmp_bytes", l.tmp_bytes}}}};
}

SandboxSpec spec_from_json(const nlohmann::json& j) {
  SandboxSpec s;
  s.argv = j.value("argv", std::vector<std::string>{});
  s.env = j.value("env", clean_environment());
  s.cwd = j.value("cwd", "");
  for (const auto& m : items_of(j, "mounts"))
    s.mounts.push_back({m.at("path"), m.value("writable", false)});
  s.jail_dir = j.value("jail_dir", "");
  s.slot = j.value("slot", 0);
  s.isolate = j.value("isolate", true);
  s.gpu = j.value("gpu", false);
  s.cgroup = j.value("cgroup", "");
  if (j.contains("limits")) {
    const auto& l = j["limits"];
    Limits& o = s.limits;
    o.wall_seconds = l.value("wall_seconds", o.wall_seconds);
    o.cpu_seconds = l.value("cpu_seconds", o.cpu_seconds);
    o.memory_bytes = l.value("memory_bytes", o.memory_bytes);
    o.file_bytes = l.value("file_bytes", o.file_bytes);
    o.processes = l.value("processes", o.processes);
    o.open_files = l.value("open_files", o.open_files);
    o.output_keep_bytes = l.value("output_keep_bytes", o.output_keep_bytes);
    o.output_kill_bytes = l.value("output_kill_bytes", o.output_kill_bytes);
    o.tmp_bytes = l.value("tmp_bytes", o.tmp_bytes);
  }
  return s;
}

RunResult run_sandboxed(const SandboxSpec& spec) {
  SandboxProcess p(spec);
  return p.finish();
}

}  // namespace workbook::grade
