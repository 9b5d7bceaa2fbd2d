#pragma once
// Lab 03's test helpers: a watchdog, so that a broken pool fails a test instead of hanging it, the
// CPU time this process has used (to catch busy-waiting), and the pool sizes the tests try.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>

namespace lab03::testing {

// ThreadSanitizer makes code 5 to 15 times slower: under it the tests wait longer and stress less.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderTsan = true;
#else
inline constexpr bool kUnderTsan = false;
#endif

/// Pool sizes the tests try: one worker, two, an odd number, and more workers than this machine
/// has cores (the pool must be right however its threads are scheduled).
inline constexpr unsigned kPoolSizes[] = {1, 2, 3, 8};

/// Ends the test run with a message if the scope it guards has not finished within the limit: a
/// lost wake-up or a deadlock would otherwise hang a test forever. The hung threads cannot be
/// stopped from outside, so it prints what went wrong and ends the process.
class Watchdog {
 public:
  explicit Watchdog(std::string what, std::chrono::seconds limit = std::chrono::seconds(20))
      : what_(std::move(what)), limit_(limit * (kUnderTsan ? 10 : 1)) {
    if (const auto* test = ::testing::UnitTest::GetInstance()->current_test_info())
      test_ = std::string(test->test_suite_name()) + "." + test->name();
    thread_ = std::jthread([this] { guard(); });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    finished_.notify_one();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void guard() {
    std::unique_lock lock(mutex_);
    if (finished_.wait_for(lock, limit_, [this] { return done_; })) return;
    std::fprintf(
        stderr,
        "\nFAIL %s: not finished after %lld s: %s.\n"
        "It probably never will. The usual causes:\n"
        "  - a lost wake-up: a worker sleeps through a notification because stopping_ or the "
        "queue changed without the mutex held, or it waits without a predicate;\n"
        "  - a deadlock: a task run while the worker holds the mutex (the task's own submit() "
        "then waits for that mutex forever), or a task that waits for other tasks of its pool;\n"
        "  - a future that never becomes ready: a task lost from the queue, or workers that "
        "leave while tasks are still queued.\n"
        "Edit labs/03_thread_pool/thread_pool.cpp. To see where each thread waits, run the test "
        "under gdb and type `thread apply all bt` once it hangs.\n",
        test_.c_str(), static_cast<long long>(limit_.count()), what_.c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }

  std::string what_, test_;
  std::chrono::seconds limit_;
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::jthread thread_;  // last: started once the members it uses exist, joined before they go
};

/// CPU time used by every thread of this process so far, in seconds. A thread that sleeps uses
/// none; one that spins in a loop waiting for something uses a whole core.
inline double cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

}  // namespace lab03::testing
