#include <workbook/internal/subprocess.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
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

  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
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

}  // namespace workbook
