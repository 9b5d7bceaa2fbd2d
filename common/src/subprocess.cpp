#include <workbook/internal/subprocess.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace workbook {
namespace {

// A pipe whose ends sit above fd 10 and close on exec: the child gets only what it is handed.
std::pair<int, int> make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  for (int& fd : fds) {
    const int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    fd = high;
  }
  return {fds[0], fds[1]};
}

Subprocess::Exit decode(int status) {
  Subprocess::Exit e;
  if (WIFEXITED(status)) {
    e.exited = true;
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
  }
  return e;
}

}  // namespace

std::string Subprocess::Exit::describe() const {
  if (exited) return "exit code " + std::to_string(code);
  const char* name = strsignal(signal);
  return "killed by signal " + std::to_string(signal) + " (" + (name ? name : "unknown") + ")";
}

Subprocess::Subprocess(const Options& options) {
  if (options.argv.empty()) throw std::invalid_argument("Subprocess: no program given");
  std::signal(SIGPIPE, SIG_IGN);  // a dead child must not kill us when we write to it

  std::pair<int, int> down{-1, -1}, up{-1, -1};
  if (options.channel) {
    down = make_pipe();  // parent writes, child reads on fd 3
    up = make_pipe();    // child writes on fd 4, parent reads
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (options.environment) {
    for (const std::string& e : *options.environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  // Extra descriptors moved above 10 first, so that none sits where another must go.
  std::vector<int> extra;
  for (int fd : options.extra_fds) {
    const int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (high < 0)
      throw std::runtime_error(std::string("passing a descriptor: ") + std::strerror(errno));
    extra.push_back(high);
  }
  int exec_error[2];
  if (pipe2(exec_error, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");

  const char* cgroup_procs = options.cgroup_procs.empty() ? nullptr : options.cgroup_procs.c_str();

  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    if (cgroup_procs != nullptr) {
      // Into the cgroup before anything of the program runs: "0" is the writer itself.
      const int fd = open(cgroup_procs, O_WRONLY | O_CLOEXEC);
      if (fd < 0 || write(fd, "0", 1) != 1) {
        const int err = -errno;  // negative: the cgroup, not exec, failed
        (void)!write(exec_error[1], &err, sizeof err);
        _exit(127);
      }
      close(fd);
    }
    if (options.channel) {
      dup2(down.first, 3);
      dup2(up.second, 4);
    }
    for (std::size_t i = 0; i < extra.size(); ++i) dup2(extra[i], 5 + static_cast<int>(i));
    execve(argv[0], argv.data(), options.environment ? envp.data() : environ);
    const int err = errno;  // tell the parent why, through the close-on-exec pipe
    (void)!write(exec_error[1], &err, sizeof err);
    _exit(127);
  }
  close(exec_error[1]);
  for (int fd : extra) close(fd);
  int err = 0;
  const bool failed = read(exec_error[0], &err, sizeof err) == sizeof err;
  close(exec_error[0]);
  if (options.channel) {
    close(down.first);
    close(up.second);
    to_child_ = down.second;
    from_child_ = up.first;
  }
  if (failed) {
    wait();
    if (err < 0)
      throw std::runtime_error("cannot move " + options.argv[0] + " into the cgroup " +
                               options.cgroup_procs + ": " + std::strerror(-err));
    throw std::runtime_error("cannot run " + options.argv[0] + ": " + std::strerror(err));
  }
}

Subprocess::~Subprocess() {
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
  if (!exit_ && pid_ > 0) {
    kill();
    wait();
  }
}

bool Subprocess::send(const std::string& line) {
  const std::string data = line + "\n";
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(to_child_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

Subprocess::Read Subprocess::read_line(std::string& line, double timeout_seconds) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    if (const auto newline = buffer_.find('\n'); newline != std::string::npos) {
      line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return Read::line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Read::timeout;
    pollfd p{from_child_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return Read::timeout;
    char chunk[65536];
    const ssize_t n = read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Read::end;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::optional<Subprocess::Exit> Subprocess::wait(double timeout_seconds) {
  if (exit_) return exit_;
  if (pid_ <= 0) return std::nullopt;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, timeout_seconds < 0 ? 0 : WNOHANG);
    if (r == pid_) {
      exit_ = decode(status);
      return exit_;
    }
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (timeout_seconds >= 0 && Clock::now() >= deadline) return std::nullopt;
    if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void Subprocess::kill() {
  if (!exit_ && pid_ > 0) ::kill(pid_, SIGKILL);
}

// --- A child's process tree ------------------------------------------------------------------

namespace {

namespace fs = std::filesystem;

// The fields of /proc/PID/stat after the command's name (which may hold spaces and parentheses):
// [0] is the state, [1] the parent, [7] minflt, [8] cminflt, [11] utime, [12] stime, [13] cutime,
// [14] cstime.
std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const auto close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

std::vector<pid_t> pids_in(const std::string& procs) {
  std::vector<pid_t> pids;
  std::ifstream in(procs);
  for (long p; in >> p;) pids.push_back(static_cast<pid_t>(p));
  return pids;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// The state letter of a process: 'T' stopped, 't' traced, 'Z' a zombie; 0 once it is gone.
char state_of(pid_t pid) {
  const std::vector<std::string> f = stat_fields(pid);
  return f.empty() || f[0].empty() ? 0 : f[0][0];
}

}  // namespace

std::vector<pid_t> process_tree(pid_t root, const std::string& cgroup_procs) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    const std::vector<std::string> f = stat_fields(pid);
    if (f.size() > 1) children[static_cast<pid_t>(std::stol(f[1]))].push_back(pid);
  }
  std::set<pid_t> tree;
  std::vector<pid_t> todo = {root};
  if (!cgroup_procs.empty())
    for (pid_t p : pids_in(cgroup_procs)) todo.push_back(p);
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    if (p <= 0 || !tree.insert(p).second) continue;
    for (pid_t c : children[p]) todo.push_back(c);
  }
  return {tree.begin(), tree.end()};
}

double cpu_seconds(const std::vector<pid_t>& pids) {
  static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  double total = 0;
  for (pid_t pid : pids) {
    const std::vector<std::string> f = stat_fields(pid);
    if (f.size() < 15) continue;  // gone
    // Reaped children's time only comes in clock ticks.
    total += (std::stod(f[13]) + std::stod(f[14])) / tick;
    // The process's own threads, to the nanosecond, from its CPU clock; in ticks when that clock
    // cannot be read.
    clockid_t clock;
    timespec t{};
    if (clock_getcpuclockid(pid, &clock) == 0 && clock_gettime(clock, &t) == 0)
      total += static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
    else
      total += (std::stod(f[11]) + std::stod(f[12])) / tick;
  }
  return total;
}

long minor_page_faults(pid_t pid) {
  const std::vector<std::string> f = stat_fields(pid);
  if (f.size() < 9) return 0;                // gone
  return std::stol(f[7]) + std::stol(f[8]);  // minflt, cminflt
}

TreeActivity tree_activity(const std::vector<pid_t>& pids) {
  TreeActivity a;
  a.cpu = cpu_seconds(pids);
  for (pid_t pid : pids) {
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
      std::ifstream status(task.path() / "status");
      bool read = false;
      for (std::string line; std::getline(status, line);)
        if (line.find("ctxt_switches:") != std::string::npos) {
          a.switches += std::stol(line.substr(line.find(':') + 1));
          read = true;
        }
      a.threads += read;
    }
  }
  return a;
}

TreeFreezer::TreeFreezer(const std::string& name) {
  static std::atomic<int> counter{0};
  const std::string leaf =
      kCgroupPrefix + name + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  // v1: a hierarchy of its own, apart from those that limit memory or processes, so joining it
  // changes nothing else about the child.
  const std::string v1 = "/sys/fs/cgroup/freezer";
  if (access((v1 + "/cgroup.procs").c_str(), W_OK) == 0 &&
      mkdir((v1 + "/" + leaf).c_str(), 0700) == 0) {
    method_ = Method::cgroup_v1;
    dir_ = v1 + "/" + leaf;
    procs_ = dir_ + "/cgroup.procs";
    return;
  }
  // v2: beside this process's own cgroup (0::/path), where it may create one.
  std::ifstream self("/proc/self/cgroup");
  for (std::string line; std::getline(self, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    for (const std::string mount : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
      const std::string parent = mount + line.substr(3);
      if (access((mount + "/cgroup.controllers").c_str(), F_OK) != 0) continue;
      const std::string dir = parent + (parent.back() == '/' ? "" : "/") + leaf;
      if (mkdir(dir.c_str(), 0700) != 0) continue;
      if (access((dir + "/cgroup.freeze").c_str(), W_OK) == 0) {
        method_ = Method::cgroup_v2;
        dir_ = dir;
        procs_ = dir_ + "/cgroup.procs";
        return;
      }
      rmdir(dir.c_str());
    }
  }
}

TreeFreezer::~TreeFreezer() {
  try {
    thaw();
  } catch (...) {
  }
  if (dir_.empty()) return;
  // The child's owner kills it; wait briefly for its processes to leave before removing the cgroup.
  for (int i = 0; i < 200 && rmdir(dir_.c_str()) != 0 && errno == EBUSY; ++i) {
    for (pid_t p : pids_in(procs_)) ::kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string TreeFreezer::describe() const {
  switch (method_) {
    case Method::cgroup_v1:
      return "the cgroup v1 freezer";
    case Method::cgroup_v2:
      return "the cgroup v2 freezer";
    case Method::signals:
      break;
  }
  return "SIGSTOP of every process";
}

void TreeFreezer::freeze(double timeout) {
  if (frozen_ || root_ <= 0) return;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout);
  frozen_ = true;
  std::set<pid_t> in_cgroup;
  if (method_ != Method::signals) {
    const bool v1 = method_ == Method::cgroup_v1;
    if (!write_text(dir_ + (v1 ? "/freezer.state" : "/cgroup.freeze"), v1 ? "FROZEN" : "1"))
      throw std::runtime_error("cannot freeze the cgroup " + dir_ + ": " + std::strerror(errno));
    for (;;) {
      const std::string state =
          v1 ? read_text(dir_ + "/freezer.state") : read_text(dir_ + "/cgroup.events");
      if (v1 ? state.rfind("FROZEN", 0) == 0 : state.find("frozen 1") != std::string::npos) break;
      if (Clock::now() > deadline)
        throw std::runtime_error("the cgroup " + dir_ + " did not freeze within " +
                                 std::to_string(timeout) + " s");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    for (pid_t p : pids_in(procs_)) in_cgroup.insert(p);
  }
  // Whatever of the tree is outside the cgroup (or everything, without one): stopped by signal,
  // repeated until no new process appears (one may fork while its siblings are being stopped).
  std::set<pid_t> done;
  for (bool more = true; more;) {
    more = false;
    for (pid_t p : process_tree(root_, procs_)) {
      if (in_cgroup.count(p) || done.count(p)) continue;
      more = true;
      done.insert(p);
      if (::kill(p, SIGSTOP) != 0) {
        if (errno == ESRCH) continue;
        throw std::runtime_error("cannot stop process " + std::to_string(p) +
                                 " of the tree: " + std::strerror(errno));
      }
      signalled_.push_back(p);
    }
  }
  // A stop takes effect asynchronously: wait until each is stopped (or gone).
  for (pid_t p : signalled_) {
    for (char s = state_of(p); s != 0 && s != 'T' && s != 't' && s != 'Z' && s != 'X';
         s = state_of(p)) {
      if (Clock::now() > deadline)
        throw std::runtime_error("process " + std::to_string(p) + " did not stop within " +
                                 std::to_string(timeout) + " s");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
}

void TreeFreezer::thaw() {
  if (!frozen_) return;
  frozen_ = false;
  for (pid_t p : signalled_) ::kill(p, SIGCONT);
  signalled_.clear();
  if (method_ == Method::cgroup_v1) write_text(dir_ + "/freezer.state", "THAWED");
  if (method_ == Method::cgroup_v2) write_text(dir_ + "/cgroup.freeze", "0");
}

}  // namespace workbook
