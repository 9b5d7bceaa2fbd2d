// The pipeline's shared helpers (see workspace.hpp).
#include "workspace.hpp"

#include <workbook/report.hpp>

#include <cerrno>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace workbook::grade {

std::string fixed(double v, int digits) {
  return workbook::format_fixed(v, digits);
}

std::string student_paths(std::string text, const Workspace& w, const Cache& cache) {
  text = replace_all(text, w.src().string() + "/", "");
  for (const auto& [n, lab] : cache.labs) text = replace_all(text, lab.src().string() + "/", "");
  text = replace_all(text, w.root.string() + "/", "");
  return text;
}

std::string cut(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  return text.substr(0, max) + "\n[... " + std::to_string(text.size() - max) + " more characters]";
}

std::string fenced(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return "```\n" + replace_all(t, "```", "'''") + "\n```\n";
}

SandboxSpec base_spec(const Context& c, const Rubric& rubric, double wall) {
  SandboxSpec s;
  s.env = clean_environment({"WORKBOOK_SEED=" + std::to_string(c.seed)});
  s.cwd = c.ws.tmp().string();
  s.jail_dir = c.ws.jail().string();
  s.slot = c.options.slot;
  s.limits.wall_seconds = wall;
  s.limits.cpu_seconds = wall;
  s.limits.memory_bytes = rubric.memory_bytes;
  s.limits.processes = rubric.processes;
  s.limits.file_bytes = rubric.file_bytes;
  s.limits.output_keep_bytes = rubric.output_keep_bytes;
  s.cgroup = c.cgroup;
  s.mounts.push_back({c.ws.tmp().string(), true});
  return s;
}

PhaseLock::PhaseLock(const fs::path& cache, bool exclusive) {
  gate_ = open((cache / ".phase-gate").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  lock_ = open((cache / ".phase-lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (gate_ < 0 || lock_ < 0) return;  // a read-only cache: no coordination, still correct
  auto take = [](int fd, int how) {
    while (flock(fd, how) != 0 && errno == EINTR) {
    }
  };
  // Writer preference: whoever waits at the gate blocks newcomers until it has the lock.
  take(gate_, LOCK_EX);
  if (!exclusive) {
    take(lock_, LOCK_SH);
  } else {
    const auto until = Clock::now() + std::chrono::duration<double>(kPhaseWaitSeconds);
    while (!(alone_ = flock(lock_, LOCK_EX | LOCK_NB) == 0) && Clock::now() < until) usleep(50000);
  }
  flock(gate_, LOCK_UN);
}

PhaseLock::~PhaseLock() {
  if (lock_ >= 0) close(lock_);
  if (gate_ >= 0) close(gate_);
}

}  // namespace workbook::grade
