#pragma once
// This process's threads as the kernel sees them (/proc/self/task): their ids, each one's own CPU
// time, and where each is blocked. Lab 03's tests use it to see into a stuck or spinning pool, its
// perf cases to tell how the threads of a call shared the work. Linux only, as the lab is.
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace lab03::threads {

/// The ids of this process's threads (/proc/self/task).
inline std::vector<pid_t> thread_ids() {
  std::vector<pid_t> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec))
    ids.push_back(static_cast<pid_t>(std::stol(entry.path().filename().string())));
  std::sort(ids.begin(), ids.end());
  return ids;
}

/// Whether this process's threads can be listed (/proc mounted): where they cannot, the checks
/// that need them are left out rather than failed.
inline bool visible() {
  return !thread_ids().empty();
}

inline pid_t this_thread_id() {
  return static_cast<pid_t>(::syscall(SYS_gettid));
}

/// CPU time thread `tid` of this process has used, in seconds (its own clock, as
/// pthread_getcpuclockid gives it); -1 once the thread has ended. A sleeping thread uses none; one
/// that polls in a loop uses all the CPU the machine gives it.
inline double thread_cpu_seconds(pid_t tid) {
  // The kernel's per-thread CPU clock id: what glibc's pthread_getcpuclockid() computes from a
  // pthread_t, here from the thread id (the pool's workers are private to it).
  const clockid_t clock = static_cast<clockid_t>((~static_cast<unsigned>(tid)) << 3) | 6;
  timespec t{};
  if (clock_gettime(clock, &t) != 0) return -1;
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// How many times thread `tid` has left its core so far (voluntary and involuntary context
/// switches, /proc/self/task/<tid>/status), -1 once it has ended. A thread asleep on a condition
/// variable leaves it once and stays off; one that polls and yields leaves it at every turn
/// whenever another thread wants the core, however little CPU time that leaves it.
inline long thread_switches(pid_t tid) {
  std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
  long sum = -1;
  for (std::string line; std::getline(status, line);)
    if (line.find("ctxt_switches:") != std::string::npos)
      sum = std::max(sum, 0L) + std::stol(line.substr(line.find(':') + 1));
  return sum;
}

/// Where one thread is, read from /proc/self/task/<tid>/{stat,syscall}.
struct ThreadState {
  pid_t tid = 0;
  char state = '?';         ///< R running, S sleeping, D, ... ('?' once the thread has ended)
  long syscall = -2;        ///< the system call it is blocked in, -1 none, -2 unknown (running)
  std::uintptr_t arg0 = 0;  ///< its first argument: a futex's address
  unsigned long arg1 = 0;   ///< its second: a futex's operation
  double cpu = 0;           ///< CPU seconds used so far

  bool ended() const { return state == '?'; }
  bool in_futex() const { return syscall == SYS_futex; }
  bool sleeping() const { return syscall == SYS_clock_nanosleep || syscall == SYS_nanosleep; }
  /// A futex wait on an address inside [begin, begin + size).
  bool waits_inside(const void* begin, std::size_t size) const {
    const auto b = reinterpret_cast<std::uintptr_t>(begin);
    return in_futex() && arg0 >= b && arg0 < b + size;
  }
  /// glibc waits for a condition variable with FUTEX_WAIT_BITSET, for a mutex with FUTEX_WAIT.
  bool futex_is_condition_wait() const { return (arg1 & 0x7f) == 9; }
  bool futex_is_lock_wait() const { return (arg1 & 0x7f) == 0; }
};

inline ThreadState thread_state(pid_t tid) {
  ThreadState s;
  s.tid = tid;
  const std::string dir = "/proc/self/task/" + std::to_string(tid);
  std::ifstream stat(dir + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return s;
  const std::size_t paren = line.rfind(')');  // the name may hold spaces and parentheses
  if (paren == std::string::npos || paren + 2 >= line.size()) return s;
  s.state = line[paren + 2];
  s.cpu = thread_cpu_seconds(tid);
  std::ifstream sys(dir + "/syscall");
  std::string first;
  if (sys >> first && first != "running") {
    s.syscall = std::stol(first);
    std::string a0, a1;
    if (sys >> a0 >> a1) {
      s.arg0 = static_cast<std::uintptr_t>(std::stoull(a0, nullptr, 16));
      s.arg1 = std::stoul(a1, nullptr, 16);
    }
  }
  return s;
}

/// The threads started by a constructor: those of this process after it ran and not before.
template <class Make>
std::vector<pid_t> threads_started_by(Make&& make) {
  const std::vector<pid_t> before = thread_ids();
  make();
  std::vector<pid_t> now = thread_ids(), added;
  std::set_difference(now.begin(), now.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  return added;
}

/// The threads that appeared in this process while `call` ran, as another thread saw them in
/// /proc/self/task, looking every 100 us (one that lives shorter may go unseen), and the call's
/// wall time.
struct CallThreads {
  std::vector<pid_t> started;  ///< threads seen during the call that were not there before it
  double seconds = 0;          ///< the call's wall time
};

inline CallThreads watch_call(const std::function<void()>& call) {
  CallThreads seen;
  std::atomic<int> phase{0};  // 0 starting, 1 the call runs, 2 it has returned
  std::jthread watcher([&] {
    const std::vector<pid_t> before = thread_ids();  // this thread's own id among them
    phase = 1;
    while (phase == 1) {
      for (pid_t tid : thread_ids())
        if (!std::binary_search(before.begin(), before.end(), tid) &&
            std::find(seen.started.begin(), seen.started.end(), tid) == seen.started.end())
          seen.started.push_back(tid);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  while (phase == 0) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  call();
  seen.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  phase = 2;
  watcher.join();
  return seen;
}

}  // namespace lab03::threads
