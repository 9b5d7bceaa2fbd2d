// Control groups for the sandbox (see cgroup.hpp).
#include <grade/cgroup.hpp>

#include <grade/sandbox.hpp>
#include <grade/util.hpp>

#include <workbook/internal/subprocess.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

using Clock = std::chrono::steady_clock;
using workbook::TreeFreezer;

bool write_file(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> words(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::string w;
  std::istringstream in(text);
  while (std::getline(in, w, separator))
    if (!w.empty()) out.push_back(w);
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

// The subfolders of a cgroup folder (its child cgroups).
std::vector<std::string> children(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
      out.push_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

void members_below(const std::string& dir, std::vector<pid_t>& out) {
  for (const std::string& line : words(read_file(dir + "/cgroup.procs"), '\n'))
    out.push_back(static_cast<pid_t>(std::stol(line)));
  for (const std::string& c : children(dir)) members_below(dir + "/" + c, out);
}

// The mount point of each cgroup hierarchy: v1 by controller, v2 as "".
struct Mounts {
  std::string v2;
  std::vector<std::pair<std::string, std::string>> v1;  // controller, mount point
};

Mounts find_mounts() {
  Mounts m;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTIONS
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    const std::vector<std::string> left = words(line.substr(0, dash), ' ');
    const std::vector<std::string> right = words(line.substr(dash + 3), ' ');
    if (left.size() < 5 || right.size() < 3 || left[3] != "/") continue;
    if (right[0] == "cgroup2" && m.v2.empty()) {
      m.v2 = left[4];
    } else if (right[0] == "cgroup") {
      for (const std::string& o : words(right[2], ','))
        if (o == "memory" || o == "pids" || o == "cpu" || o == "freezer")
          m.v1.push_back({o, left[4]});
    }
  }
  return m;
}

// Where a v2 cgroup's own processes go so that it can hand controllers down (probe()).
constexpr const char* kLeaf = "workbook-leaf";

// The perf driver's freezer cgroup for a worker (a TreeFreezer's), beside or below the grader's
// own.
const std::string kFreezer = std::string("/") + TreeFreezer::kCgroupPrefix;

// The grader's own cgroup in each hierarchy: "" for v2, the controller for v1. A process in our
// leaf (a checker started after the probe moved the grader there), or in the cgroup the perf
// driver freezes a worker's tree by (sandbox-exec, which starts that worker), belongs to the
// grader's: its runs go into the grade's cgroup, not one below the freezer's.
std::string own_path(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string list = line.substr(a + 1, b - a - 1);
    if ((controller.empty() && line.substr(0, a) == "0" && list.empty()) ||
        (!controller.empty() && has(words(list, ','), controller))) {
      std::string path = line.substr(b + 1);
      const std::string leaf = std::string("/") + kLeaf;
      if (path.size() >= leaf.size() &&
          path.compare(path.size() - leaf.size(), leaf.size(), leaf) == 0)
        path.resize(path.size() - leaf.size());
      if (const auto at = path.rfind(kFreezer);
          at != std::string::npos && path.find('/', at + 1) == std::string::npos)
        path.resize(at);
      return path == "/" ? "" : path;
    }
  }
  return "";
}

void apply_limits(const CgroupSupport& s, const std::vector<std::string>& dirs,
                  const GradeLimits& l);

// Whether a grade's limits can be set here (a parent's smaller CPU quota refuses ours, say): found
// once, so that doctor says it, rather than every grade failing.
CgroupSupport limits_settable(CgroupSupport s) {
  const std::string probe = "probe-" + std::to_string(getpid());
  std::vector<std::string> dirs;
  for (const std::string& r : s.roots) {
    dirs.push_back(r + "/" + probe);
    mkdir(dirs.back().c_str(), 0755);
  }
  try {
    apply_limits(s, dirs, GradeLimits{});
  } catch (const std::exception& e) {
    s.version = 0;
    s.note = std::string("the grade's limits cannot be set: ") + e.what();
  }
  for (const std::string& d : dirs) rmdir(d.c_str());
  if (s.version == 0) s.roots.clear();
  return s;
}

}  // namespace

double cpus_of_this_process() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

namespace {

void apply_limits(const CgroupSupport& s, const std::vector<std::string>& dirs,
                  const GradeLimits& l) {
  if (dirs.empty()) return;
  const double cpus = l.cpus > 0 ? l.cpus : cpus_of_this_process();
  const long period = 100000;
  const long quota = static_cast<long>(cpus * static_cast<double>(period));
  auto set = [](const std::string& file, const std::string& value) {
    if (!write_file(file, value))
      throw EnvironmentError("cannot set " + file + " to " + value + ": " + std::strerror(errno));
  };
  if (s.version == 2) {
    set(dirs[0] + "/memory.max", std::to_string(l.memory_bytes));
    if (access((dirs[0] + "/memory.swap.max").c_str(), F_OK) == 0)
      set(dirs[0] + "/memory.swap.max", "0");
    set(dirs[0] + "/pids.max", std::to_string(l.processes));
    set(dirs[0] + "/cpu.max", std::to_string(quota) + " " + std::to_string(period));
  } else {
    set(dirs[0] + "/memory.limit_in_bytes", std::to_string(l.memory_bytes));
    set(dirs[1] + "/pids.max", std::to_string(l.processes));
    set(dirs[2] + "/cpu.cfs_period_us", std::to_string(period));
    set(dirs[2] + "/cpu.cfs_quota_us", std::to_string(quota));
  }
}

CgroupSupport probe() {
  CgroupSupport s;
  if (geteuid() != 0) {
    s.note = "not root: no cgroup of its own per grade (limits are per process only)";
    return s;
  }
  const Mounts m = find_mounts();
  // v2, where it holds the controllers (a machine that binds them to v1 mounts an empty v2 too).
  if (!m.v2.empty()) {
    const std::string own = m.v2 + own_path("");
    const std::vector<std::string> offered = words(read_file(own + "/cgroup.controllers"), ' ');
    const std::vector<std::string> trimmed = [&] {
      std::vector<std::string> t;
      for (std::string w : offered) {
        while (!w.empty() && w.back() == '\n') w.pop_back();
        t.push_back(w);
      }
      return t;
    }();
    if (has(trimmed, "memory") && has(trimmed, "pids") && has(trimmed, "cpu")) {
      const std::string ours = own + "/workbook";
      mkdir(ours.c_str(), 0755);
      // Controllers are handed down through cgroup.subtree_control at each level. A non-root
      // cgroup that has processes of its own cannot do that ("no internal processes"): as a
      // delegated cgroup's owner does (systemd's advice, and container runtimes'), its processes
      // move to a leaf of their own first, "workbook-leaf" (same limits: they stay below).
      bool handed = write_file(own + "/cgroup.subtree_control", "+memory +pids +cpu");
      if (!handed && errno == EBUSY) {
        const std::string leaf = own + "/" + kLeaf;
        mkdir(leaf.c_str(), 0755);
        for (int round = 0; round < 3 && !handed; ++round) {
          for (const std::string& pid : words(read_file(own + "/cgroup.procs"), '\n'))
            write_file(leaf + "/cgroup.procs", pid);
          handed = write_file(own + "/cgroup.subtree_control", "+memory +pids +cpu");
        }
        if (handed)
          s.note = "cgroup v2: the processes of " + own + " were moved to " + leaf +
                   " so that it can hand controllers down";
      }
      if (!handed || !write_file(ours + "/cgroup.subtree_control", "+memory +pids +cpu")) {
        s.note = "cgroup v2 at " + m.v2 + " offers memory, pids and cpu, but " + own +
                 " cannot hand them down (" + std::strerror(errno) +
                 "; a cgroup with processes of its own cannot): run the grader in a delegated "
                 "cgroup of its own (systemd-run --scope -p Delegate=yes, or a container's)";
      } else {
        s.version = 2;
        s.roots = {ours};
        s.freezer = access((ours + "/cgroup.freeze").c_str(), F_OK) == 0;
        return limits_settable(s);
      }
    }
  }
  std::string v1_memory, v1_pids, v1_cpu, v1_freezer;
  for (const auto& [controller, mount] : m.v1) {
    const std::string ours = mount + own_path(controller) + "/workbook";
    if (controller == "memory") v1_memory = ours;
    if (controller == "pids") v1_pids = ours;
    if (controller == "cpu") v1_cpu = ours;
    if (controller == "freezer") v1_freezer = ours;
  }
  if (v1_memory.empty() || v1_pids.empty() || v1_cpu.empty()) {
    if (s.note.empty())
      s.note = "no cgroup hierarchy with the memory, pids and cpu controllers is mounted";
    return s;
  }
  s.roots = {v1_memory, v1_pids, v1_cpu};
  if (!v1_freezer.empty()) s.roots.push_back(v1_freezer);
  for (const std::string& r : s.roots) {
    if (mkdir(r.c_str(), 0755) != 0 && errno != EEXIST) {
      s.note = "cannot create " + r + ": " + std::strerror(errno);
      s.roots.clear();
      return s;
    }
  }
  s.version = 1;
  s.freezer = !v1_freezer.empty();
  if (!s.freezer) s.note = "no freezer controller: a tree is killed without being stopped first";
  return limits_settable(s);
}

// The folder of `path` in each hierarchy.
std::vector<std::string> folders(const std::string& path) {
  std::vector<std::string> out;
  for (const std::string& r : cgroup_support().roots) out.push_back(r + "/" + path);
  return out;
}

// Where the freezer is: v2's folder itself, or v1's freezer hierarchy (the last root).
std::string freezer_folder(const std::string& path) {
  const CgroupSupport& s = cgroup_support();
  if (!s.freezer) return "";
  return s.roots.back() + "/" + path;
}

void freeze(const std::string& dir, bool frozen) {
  if (dir.empty()) return;
  if (cgroup_support().version == 2) {
    write_file(dir + "/cgroup.freeze", frozen ? "1" : "0");
    return;
  }
  write_file(dir + "/freezer.state", frozen ? "FROZEN" : "THAWED");
  if (!frozen) return;
  // v1 freezes asynchronously: FREEZING until every task has stopped.
  const auto until = Clock::now() + std::chrono::seconds(1);
  while (Clock::now() < until && read_file(dir + "/freezer.state").rfind("FROZEN", 0) != 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

}  // namespace

nlohmann::json CgroupSupport::to_json() const {
  return {{"version", version}, {"folders", roots}, {"freezer", freezer}, {"note", note}};
}

const CgroupSupport& cgroup_support() {
  static const CgroupSupport s = probe();
  return s;
}

void cgroup_create(const std::string& path) {
  for (const std::string& dir : folders(path)) {
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      throw EnvironmentError("cannot create the cgroup " + dir + ": " + std::strerror(errno));
  }
  // v2: the controllers reach a child only through its parent's subtree_control.
  if (cgroup_support().version == 2 &&
      !write_file(folders(path).front() + "/cgroup.subtree_control", "+memory +pids +cpu"))
    throw EnvironmentError("cannot hand the memory, pids and cpu controllers down to " +
                           folders(path).front() + ": " + std::strerror(errno));
}

void cgroup_limit(const std::string& path, const GradeLimits& l) {
  apply_limits(cgroup_support(), folders(path), l);
}

std::vector<std::string> cgroup_procs_files(const std::string& path) {
  std::vector<std::string> out;
  for (const std::string& dir : folders(path)) out.push_back(dir + "/cgroup.procs");
  return out;
}

std::vector<pid_t> cgroup_members(const std::string& path) {
  std::vector<pid_t> out;
  for (const std::string& dir : folders(path)) members_below(dir, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool cgroup_kill(const std::string& path, double wait_seconds) {
  if (cgroup_support().version == 0) return true;
  const std::vector<std::string> dirs = folders(path);
  if (access(dirs.front().c_str(), F_OK) != 0) return true;
  const auto until = Clock::now() + std::chrono::duration<double>(wait_seconds);
  // v2 since Linux 5.14: one write kills the whole tree.
  if (cgroup_support().version == 2) write_file(dirs.front() + "/cgroup.kill", "1");
  for (;;) {
    // Frozen, a process cannot fork between the listing and the kill.
    const std::string frozen = freezer_folder(path);
    freeze(frozen, true);
    const std::vector<pid_t> left = cgroup_members(path);
    for (pid_t p : left) ::kill(p, SIGKILL);
    freeze(frozen, false);
    if (left.empty()) return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void cgroup_remove(const std::string& path) {
  if (cgroup_support().version == 0) return;
  cgroup_kill(path);
  for (const std::string& dir : folders(path)) {
    // Children first; a folder whose last process is still exiting is busy for a moment.
    for (const std::string& c : children(dir)) cgroup_remove(path + "/" + c);
    for (int i = 0; i < 200 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

GradeScope::GradeScope(const GradeLimits& limits, const std::string& mounted_work) {
  if (cgroup_support().version == 0) return;
  path_ = "grade-" + random_hex(8);
  cgroup_create(path_);
  cgroup_limit(path_, limits);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw EnvironmentError(std::string("pipe: ") + std::strerror(errno));
  const pid_t grader = getpid();
  reaper_ = fork();
  if (reaper_ < 0) throw EnvironmentError(std::string("fork: ") + std::strerror(errno));
  if (reaper_ == 0) {
    // Out of the grader's session and process group: a Ctrl-C or a kill of the group that ends
    // the grader must not end the reaper before it has done its work.
    setsid();
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) std::signal(s, SIG_IGN);
    close(pipe_fds[1]);
    // Nothing of the grader's held open (a caller waiting for the end of its output would wait
    // for the reaper too).
    const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3 && null_fd >= 0; ++fd) dup2(null_fd, fd);
    if (null_fd > 2) close(null_fd);
    close_range(3, static_cast<unsigned>(pipe_fds[0]) - 1, 0);
    close_range(static_cast<unsigned>(pipe_fds[0]) + 1, ~0u, 0);
    // The grader ends the scope by writing one byte, then closing its end. Its end closed with no
    // byte is a grader killed: a dying process's files close before its children are handed to
    // another parent, so getppid() alone would still name it for a moment.
    bool ended_in_order = false;
    for (;;) {
      pollfd p{pipe_fds[0], POLLIN, 0};
      const int ready = poll(&p, 1, 500);
      char c;
      if (ready > 0) {
        const ssize_t got = read(pipe_fds[0], &c, 1);
        if (got == 1) ended_in_order = true;
        if (got <= 0 || ended_in_order) break;  // the byte, or the grader's end closed
      }
      if (getppid() != grader) break;  // the grader is gone
    }
    cgroup_remove(path_);
    // The work folder's tmpfs goes here, whether the grader ended the scope or was killed: past
    // its byte nothing of the grade uses it, and a grader killed between that byte and its own
    // unmount (a batch killed halfway) would leave it mounted. (The grader's later unmount of the
    // same folder finds nothing to do.)
    if (!mounted_work.empty()) {
      umount2(mounted_work.c_str(), MNT_DETACH);
      rmdir(mounted_work.c_str());
    }
    _exit(0);
  }
  close(pipe_fds[0]);
  keepalive_ = pipe_fds[1];
}

GradeScope::~GradeScope() {
  if (path_.empty()) return;
  cgroup_remove(path_);
  if (keepalive_ >= 0) {
    const char done = 'x';  // in order: the grade is over, the reaper may clean up
    [[maybe_unused]] const ssize_t wrote = write(keepalive_, &done, 1);
    close(keepalive_);
  }
  if (reaper_ > 0) {
    while (waitpid(reaper_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace workbook::grade
