#pragma once
// Lab 03's test helpers. A broken pool does not fail, it hangs, spins or races, so the tests look
// at the threads themselves:
// - WatchedPool: a ThreadPool whose workers the tests know (their thread ids), with the tasks
//   submitted through it counted (submitted, started, finished) and its destruction marked;
// - Watchdog: when a guarded call is stuck (every thread asleep, nothing moving, or too long), it
//   reads where each thread waits (/proc/self/task/<tid>/syscall: a futex inside the pool is its
//   mutex or its condition variable) and names the one cause that state shows, within seconds;
// - thread_cpu_seconds: one thread's own CPU time, so that busy-waiting shows however loaded the
//   machine is (the process's CPU time against a wall clock does not: neighbours slow the spin).
// Linux only (/proc and per-thread CPU clocks), as the lab is.
#include "thread_pool.hpp"
#include "threads.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <workbook/internal/code_location.hpp>
#include <workbook/internal/compiler_warnings.hpp>
#include <workbook/internal/crash_report.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace lab03::testing {

using threads::this_thread_id;
using threads::thread_cpu_seconds;
using threads::thread_ids;
using threads::thread_state;
using threads::ThreadState;

// ThreadSanitizer makes code 5 to 15 times slower: under it the tests wait longer and stress less.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderTsan = true;
#else
inline constexpr bool kUnderTsan = false;
#endif

/// Pool sizes the tests try: one worker, two, an odd number, and more workers than this machine
/// has cores (the pool must be right however its threads are scheduled).
inline constexpr unsigned kPoolSizes[] = {1, 2, 3, 8};

/// The one command that builds *your* thread_pool.cpp with ThreadSanitizer and runs these tests
/// under it (CMakePresets.json, lab03-tsan). Named by every message about a race.
inline constexpr const char* kTsanCommand = "cmake --workflow --preset lab03-tsan";
// The crash and std::terminate reports of these tests name it too.
inline const bool kRaceCommandSet =
    (workbook::testing::internal::set_race_command(kTsanCommand), true);

// --- A pool the tests can see into
// ----------------------------------------------------------------

class WatchedPool;
class Watchdog;

namespace detail {
// Every WatchedPool alive, for the watchdog to look at when it fires.
struct Registry {
  std::mutex mutex;
  std::vector<const WatchedPool*> pools;
};
inline Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace detail

/// A ThreadPool as the tests use it: pass it wherever a ThreadPool& is expected. It knows the
/// threads the pool's constructor started (its workers), counts the tasks submitted through it,
/// and marks when its destruction begins, so that a Watchdog can say what a stuck pool is doing.
class WatchedPool {
 public:
  explicit WatchedPool(unsigned threads) : requested_(threads), pool_(threads) {
    workers_ = new_threads();
    size_ = pool_.size();
    // Said here, before any test uses the pool: a pool short of workers fails later in ways that
    // point elsewhere (a division by size() == 0, a task that never starts).
    if (size_ != threads)
      ADD_FAILURE() << "ThreadPool(" << threads << ") made a pool whose size() is " << size_
                    << " (its constructor started " << workers_.size()
                    << (workers_.size() == 1 ? " thread" : " threads")
                    << "): the constructor must start exactly `threads` workers, each running "
                       "work(). Look at its loop's bounds (for (t = 0; t < threads; ++t)).";
  }
  ~WatchedPool();  // below Watchdog, which it uses; then pool_'s destructor runs
  WatchedPool(const WatchedPool&) = delete;
  WatchedPool& operator=(const WatchedPool&) = delete;

  operator ThreadPool&() { return pool_; }
  unsigned size() const { return size_; }            ///< pool.size(), read once it was constructed
  unsigned requested() const { return requested_; }  ///< the threads asked of its constructor
  bool is_worker_thread() const { return pool_.is_worker_thread(); }

  /// pool.submit(task), counted: started when a worker begins it, finished when it ends.
  std::future<void> submit(std::function<void()> task) {
    if (!task) return pool_.submit(std::move(task));  // the pool must reject it itself
    // The sleeping workers' context switches before the first submits (reading them costs a
    // little: a hang comes at the first tasks): a worker that switched since was woken by it.
    if (submitted_ < 64) {
      std::vector<long> asleep;
      for (pid_t tid : workers_)
        asleep.push_back(thread_state(tid).in_futex() ? threads::thread_switches(tid) : -1);
      const std::lock_guard lock(switches_mutex_);
      switches_before_submit_ = std::move(asleep);
    }
    ++submitted_;
    return pool_.submit([this, task = std::move(task)] {
      ++started_;
      struct Finished {
        std::atomic<long>& count;
        ~Finished() { ++count; }
      } finished{finished_};
      task();
    });
  }

  /// Returns once every worker is blocked, asleep until there is work (at most after 1 s): the
  /// state a pool is in between calls, from which a new task must wake a worker.
  void wait_until_idle() const {
    for (int i = 0; i < 1000 && !all_asleep(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  /// Whether every worker is blocked (on a futex) now.
  bool all_asleep() const {
    return std::all_of(workers_.begin(), workers_.end(),
                       [](pid_t tid) { return thread_state(tid).in_futex(); });
  }

  const ThreadPool& pool() const { return pool_; }
  /// The threads that appeared while the pool was constructed: its workers.
  const std::vector<pid_t>& workers() const { return workers_; }
  long submitted() const { return submitted_; }
  long started() const { return started_; }
  long finished() const { return finished_; }
  bool destroying() const { return destroying_; }
  /// Once destroying(): worker k's context switches when the destruction began, -1 where it was not
  /// asleep then (running a task: its later switches say nothing).
  const std::vector<long>& switches_at_destruction() const { return switches_at_destruction_; }
  /// Worker k's context switches just before the last of the first 64 submits, -1 where it was
  /// not asleep then; empty when there were more submits (or none).
  std::vector<long> switches_before_submit() const {
    const std::lock_guard lock(switches_mutex_);
    return submitted_ <= 64 ? switches_before_submit_ : std::vector<long>{};
  }

 private:
  // Declared first, so it is the last to go: registered before the pool exists, until it is gone.
  struct Registration {
    const WatchedPool* self;
    explicit Registration(const WatchedPool* p) : self(p), before(thread_ids()) {
      std::lock_guard lock(detail::registry().mutex);
      detail::registry().pools.push_back(p);
    }
    ~Registration() {
      std::lock_guard lock(detail::registry().mutex);
      std::erase(detail::registry().pools, self);
    }
    std::vector<pid_t> before;  // the threads before the pool's constructor ran
  } registration_{this};
  // Before pool_, so that they outlive it: its destructor still runs tasks that count.
  std::vector<pid_t> workers_;
  unsigned requested_ = 0;
  unsigned size_ = 0;
  std::atomic<long> submitted_{0}, started_{0}, finished_{0};
  std::vector<long> switches_at_destruction_;  // written before destroying_ is set
  mutable std::mutex switches_mutex_;
  std::vector<long> switches_before_submit_;
  std::atomic<bool> destroying_{false};
  // Watches pool_'s destructor where no Watchdog of the test's own still does (a pool declared
  // before the test's watchdog, or one per loop iteration): a destructor that never wakes its
  // workers is reported within seconds, not by ctest's timeout.
  std::unique_ptr<Watchdog> destruction_watchdog_;
  ThreadPool pool_;

  std::vector<pid_t> new_threads() const {
    std::vector<pid_t> now = thread_ids(), added;
    std::set_difference(now.begin(), now.end(), registration_.before.begin(),
                        registration_.before.end(), std::back_inserter(added));
    return added;
  }
};

// --- What a stuck pool shows
// ----------------------------------------------------------------------

namespace detail {

inline std::string plural(long n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// glibc's pthread_mutex_t starts with its futex word; its owner's thread id is 8 bytes further.
inline pid_t mutex_owner(std::uintptr_t futex) {
  return __atomic_load_n(reinterpret_cast<const int*>(futex + 8), __ATOMIC_RELAXED);
}

inline std::string describe(const ThreadState& s, const WatchedPool* pool) {
  if (s.ended()) return "has ended";
  if (pool && s.waits_inside(&pool->pool(), sizeof(ThreadPool))) {
    if (s.futex_is_condition_wait()) return "sleeps on the pool's condition variable";
    if (s.futex_is_lock_wait())
      return "waits to lock the pool's mutex, held by thread " +
             std::to_string(mutex_owner(s.arg0));
    return "waits on a futex inside the pool object";
  }
  if (s.in_futex()) return "waits outside the pool (a future, a join, a latch or another mutex)";
  if (s.sleeping()) return "sleeps (sleep_for)";
  if (s.state == 'R') return "is running";
  if (s.syscall >= 0) return "is blocked in system call " + std::to_string(s.syscall);
  return "state " + std::string(1, s.state);
}

// The one cause the state shows, or "" when it shows none of those this lab knows. `throws`: the
// scope makes a task or chunk throw on purpose.
// `caller_at`: where the test's thread waits in the lab's code (Watchdog::waits_at), or "".
inline std::string cause(const WatchedPool& p, const std::vector<ThreadState>& workers,
                         const ThreadState& caller, const std::string& caller_at, bool throws) {
  long alive = 0, on_condition = 0, running = 0, waiting_elsewhere = 0;
  const ThreadState* self_locked = nullptr;
  const ThreadState* locked = nullptr;
  for (const ThreadState& w : workers) {
    if (w.ended()) continue;
    ++alive;
    const bool in_pool = w.waits_inside(&p.pool(), sizeof(ThreadPool));
    if (in_pool && w.futex_is_condition_wait()) ++on_condition;
    if (w.state == 'R') ++running;
    if (w.in_futex() && !in_pool) ++waiting_elsewhere;
    if (in_pool && w.futex_is_lock_wait()) {
      locked = &w;
      if (mutex_owner(w.arg0) == w.tid) self_locked = &w;
    }
  }
  const long pending = p.submitted() - p.started();
  const long n = static_cast<long>(workers.size());
  if (self_locked)
    return "worker " + std::to_string(self_locked->tid) +
           " waits to lock the pool's mutex, which it holds itself: it runs a task while holding "
           "the mutex, and the task's submit() locks it again (a deadlock). Release the mutex "
           "before running the task: take it from the queue inside the lock, run it outside.";
  if (p.destroying() && locked && mutex_owner(locked->arg0) == caller.tid)
    return "the pool's destructor holds the pool's mutex while it joins the workers, and they "
           "wait to lock that mutex (thread " +
           std::to_string(locked->tid) +
           " among them), so none can leave: a deadlock. Set stopping_ and notify under the "
           "lock, then release it (end the lock's scope) before joining the workers.";
  if (locked && caller.waits_inside(&p.pool(), sizeof(ThreadPool)) && caller.futex_is_lock_wait())
    return "the pool's mutex is never released: workers and the caller wait to lock it (held by "
           "thread " +
           std::to_string(mutex_owner(locked->arg0)) +
           "). Every lock must be released on every path: use std::lock_guard or "
           "std::unique_lock, never mutex.lock() without its unlock().";
  // The test's own call sleeps on the pool's condition variable (a submit that waits), with every
  // worker asleep too: nothing will make its wait's predicate true. (Before the count of tasks
  // submitted, which the test counts as it calls submit: that call never queued its task.)
  if (!p.destroying() && alive > 0 && on_condition == alive &&
      caller.waits_inside(&p.pool(), sizeof(ThreadPool)) && caller.futex_is_condition_wait()) {
    // "It waits at labs/.../thread_pool.cpp:62, in ThreadPool::submit (inside ...": the function.
    std::string function = "a function of the pool";
    if (const auto at = caller_at.find(", in "); at != std::string::npos)
      function = caller_at.substr(at + 5, caller_at.find_first_of(" (\n", at + 5) - at - 5);
    return "the test's thread sleeps on the pool's condition variable inside " + function +
           (caller_at.empty() ? "" : " (the line below)") + ", and " +
           (alive == 1 ? std::string("the pool's worker sleeps") : "all its workers sleep") +
           " too: no thread will make that wait's predicate true and notify it. Whatever makes "
           "the predicate true must notify the condition variable it waits on: if it waits for "
           "room in the queue, a worker must notify each time it takes a task (with notify_all, "
           "or on a condition variable of its own: the workers wait on the same one)";
  }
  if (p.destroying() && alive > 0 && on_condition == alive && pending == 0) {
    const std::string wake_all =
        "Set stopping_ = true while holding the mutex, then work_available_.notify_all(), then "
        "join; work() must leave once stopping_ is set and the queue is empty (its wait's "
        "predicate looks at stopping_)";
    // Which sleepers were woken since the destruction began: a worker asleep then that has
    // switched since left its wait and went back to it.
    long woken = 0, unwoken = 0;
    const std::vector<long>& before = p.switches_at_destruction();
    for (std::size_t k = 0; k < workers.size() && k < before.size(); ++k) {
      if (workers[k].ended() || before[k] < 0) continue;
      (threads::thread_switches(workers[k].tid) > before[k] ? woken : unwoken) += 1;
    }
    const std::string sleepers =
        alive == 1 ? std::string("its worker sleeps") : "all " + std::to_string(alive) + " sleep";
    if (woken > 0 && unwoken == 0)
      return "the pool's destructor woke its workers, but each went back to sleep on the "
             "condition variable with nothing queued (" +
             sleepers +
             " again), and the destructor waits to join them: their wait's predicate does not "
             "let them leave once stopping_ is set. A worker must wait until stopping_ || "
             "!queue_.empty(), and return when stopping_ is set and the queue is empty: "
             "work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); })";
    if (woken > 0 && unwoken > 0)
      return "the pool's destructor waits to join its workers, and " + sleepers +
             " on the condition variable with nothing queued: " +
             plural(woken, "was woken and went", "were woken and went") +
             " back to sleep (the wait's predicate does not look at stopping_), " +
             plural(unwoken, "was", "were") +
             " never woken (notify_one() wakes one thread only). " + wake_all + ".";
    if (alive < n)
      return "only " + std::to_string(n - alive) + " of the pool's " + std::to_string(n) +
             " workers left when it was destroyed: the other " + std::to_string(alive) +
             (alive == 1 ? " still sleeps" : " still sleep") +
             " on the condition variable with nothing queued, and the destructor waits to join "
             "them: the sleepers were never woken. " +
             wake_all + " (notify_one() wakes one thread only).";
    // Where no worker was asleep as the destruction began, which it was is not known.
    return "the pool's destructor waits to join its workers, but " + sleepers +
           " on the condition variable with nothing queued: " +
           (unwoken > 0 ? std::string("the destructor never woke them. ")
                        : "either the destructor never woke them, or it did and their wait's "
                          "predicate sent them back to sleep. ") +
           wake_all + ".";
  }
  if (pending > 0 && on_condition > 0) {
    // Woken since the last submit (a sleeper's switches grew) and asleep again with the task
    // queued: the wait's predicate; not woken at all: the notify.
    long woken = 0, unwoken = 0;
    const std::vector<long> before = p.switches_before_submit();
    for (std::size_t k = 0; k < workers.size() && k < before.size(); ++k) {
      if (workers[k].ended() || before[k] < 0 || !workers[k].futex_is_condition_wait()) continue;
      (threads::thread_switches(workers[k].tid) > before[k] ? woken : unwoken) += 1;
    }
    const std::string asleep =
        plural(pending, "task was", "tasks were") + " submitted and never started, yet " +
        plural(on_condition, "worker", "workers") + " of " + std::to_string(n) +
        (on_condition == 1 ? " sleeps" : " sleep") + " on the condition variable";
    const std::string predicate =
        "A worker must wait until there is a task or the pool stops: work_available_.wait(lock, "
        "[this] { return stopping_ || !queue_.empty(); })";
    if (woken > 0 && unwoken == 0)
      return asleep + ". " + (woken == 1 ? std::string("It was") : "They were") +
             " woken after the task was submitted, and went back to sleep with the task still "
             "queued: the wait's predicate is false while the queue holds a task. " +
             predicate + ".";
    if (unwoken > 0 && woken == 0)
      return asleep +
             ", and none has run since the task was submitted: a lost wake-up. submit() must "
             "wake a worker (work_available_.notify_one()) after pushing the task onto the queue "
             "with the mutex held, and a worker must check the queue under the mutex before it "
             "sleeps (wait with a predicate).";
    return asleep +
           ": either submit() did not wake one (it must notify_one() after pushing the task, "
           "with the mutex held), or a woken worker went back to sleep with the task queued (the "
           "wait's predicate). " +
           predicate + ".";
  }
  if (p.size() < p.requested())
    return "the pool was asked for " + plural(p.requested(), "thread", "threads") +
           " and its size() is " + std::to_string(p.size()) +
           ": tasks wait for workers that were never started. Start exactly `threads` workers "
           "in the constructor (for (t = 0; t < threads; ++t)), each running work().";
  if (!p.destroying() && n > 0 && alive < n)
    return plural(n - alive, "worker", "workers") + " of " + std::to_string(n) +
           (n - alive == 1 ? " has" : " have") +
           " ended while the pool is still in use (not being destroyed): work() returned before "
           "the pool was stopping, and the tasks left in the queue wait for workers that are "
           "gone. A worker may find the "
           "queue empty when it wakes (another worker took the task first, or a spurious "
           "wake-up), so it must wait in a loop until there is a task or stopping_ is set: "
           "work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); }), and "
           "return only when stopping_ is set and the queue is empty.";
  if (static_cast<long>(p.size()) > n)
    return "the pool says size() = " + std::to_string(p.size()) + ", but its constructor started " +
           std::to_string(n) + (n == 1 ? " thread" : " threads") +
           ": the tasks wait for workers that do not exist. Start size() workers in the "
           "constructor, each running work().";
  if (alive > 0 && waiting_elsewhere == alive)
    return (alive == 1 ? std::string("the pool's one worker is inside a task that waits")
                       : "all " + std::to_string(alive) + " workers are inside tasks that wait") +
           " (for a future, a latch or a join: not for the pool's mutex or condition variable), "
           "so no worker is left to run what they wait for. "
           "When a task of the pool calls parallel_for on the same pool, it must run the chunks "
           "in the calling thread (if pool.is_worker_thread()) instead of submitting them and "
           "waiting for other workers, all of which may be doing the same.";
  if (alive > 0 && on_condition == alive && pending == 0 && running == 0 && caller.in_futex() &&
      !caller.waits_inside(&p.pool(), sizeof(ThreadPool)) && throws)
    return "the caller waits (for a latch, a counter or a future) while every worker sleeps on "
           "the condition variable with nothing queued: every task has run, and in this case one "
           "of them throws. What the caller waits for is done after the call that threw, so the "
           "exception skipped it: a latch's count_down(), a counter's decrement and its notify, "
           "or a promise's set_value(). Catch the exception where the chunk runs (store it), then "
           "count down or notify on every path, the throwing one too. (If tests where nothing "
           "throws hang as well, the count itself is wrong: one that starts wrong, or a last "
           "count-down that tests the value before its decrement, remaining-- == 0, and so never "
           "wakes the caller.)";
  if (alive > 0 && on_condition == alive && pending == 0 && running == 0 && caller.in_futex() &&
      !caller.waits_inside(&p.pool(), sizeof(ThreadPool)))
    return "the caller waits while every worker sleeps on the condition variable, nothing "
           "queued: what it waits for will not come by itself. Either a task was queued without "
           "waking a worker (submit() must notify_one() after pushing); or the caller waits for a "
           "future whose task was never submitted, or never finished (an exception that escaped "
           "before set_value); or it waits on a count of its own (a latch, a counter of finished "
           "chunks) whose end was never reached or never notified: a count that starts wrong, or "
           "a last count-down that tests the value before its decrement (remaining-- == 0 where "
           "--remaining == 0 is meant) and so never wakes the caller.";
  return "";
}

}  // namespace detail

/// Fails the test with a diagnosis if the scope it guards is stuck: a broken pool hangs instead of
/// failing. It looks every 100 ms; the scope is stuck when every thread but the watchdog has been
/// blocked (none running, none in sleep_for, no CPU used) for 2 s, or after `limit` in any case
/// (a spin that never ends). The hung threads cannot be stopped from outside, so it prints what it
/// saw and ends the process. Under ctest, the later tests of the same run then fail at once,
/// naming this hang, instead of each hanging in turn.
class Watchdog {
 public:
  /// Whether the scope makes a task or chunk throw on purpose (a hang then most often comes from
  /// what the exception skipped).
  enum class Throws { no, yes };

  explicit Watchdog(std::string what, Throws throws = Throws::no,
                    std::chrono::seconds limit = std::chrono::seconds(8))
      : what_(std::move(what)), throws_(throws), limit_(limit * (kUnderTsan ? 10 : 1)) {
    ++alive();
    if (const auto* test = ::testing::UnitTest::GetInstance()->current_test_info())
      test_ = std::string(test->test_suite_name()) + "." + test->name();
    fail_if_an_earlier_test_hung(test_);
    thread_ = std::jthread([this] { guard(); });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    finished_.notify_one();
    --alive();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// How many Watchdogs guard a scope now (in any thread).
  static std::atomic<int>& alive() {
    static std::atomic<int> count{0};
    return count;
  }

  /// Under ctest: fails the test at once (ends the process) when an earlier test of this ctest
  /// run, in this same test program, hung. Called by every Watchdog.
  static void fail_if_an_earlier_test_hung(const std::string& test) {
    const std::string key = run_key();
    if (key.empty()) return;
    std::ifstream in(marker_path());
    std::string line, hung, why;
    if (!std::getline(in, line) || line != key || !std::getline(in, hung)) return;
    std::getline(in, why);
    std::fprintf(stderr,
                 "\nFAIL %s: not run, because %s hung earlier in this ctest run (%s). A hung "
                 "pool hangs every test that uses it, so the tests after it fail at once "
                 "instead of each waiting. Fix that hang first (its message above, or `ctest "
                 "--preset lab03 -R %s --output-on-failure`), then run the tests again.\n",
                 test.c_str(), hung.c_str(), why.c_str(), hung.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }

 private:
  void guard() {
    pthread_setname_np(pthread_self(), "lab03-watchdog");
    self_ = this_thread_id();
    using clock = std::chrono::steady_clock;
    auto start = clock::now();
    auto still_since = start;
    double last_cpu = -1;
    std::unique_lock lock(mutex_);
    for (;;) {
      if (finished_.wait_for(lock, std::chrono::milliseconds(100), [this] { return done_; }))
        return;
      const auto now = clock::now();
      if (debugged()) {  // stopped at breakpoints: the time is the debugger's, not a hang
        start = still_since = now;
        continue;
      }
      if (now - start >= limit_) break;
      // Stillness: under ThreadSanitizer its own background thread keeps running, so only the
      // time limit applies there.
      if (kUnderTsan) continue;
      double cpu = 0;
      bool still = true;
      for (pid_t tid : thread_ids()) {
        if (tid == self_) continue;
        const ThreadState s = thread_state(tid);
        if (s.ended()) continue;
        cpu += s.cpu;
        still = still && s.state != 'R' && !s.sleeping();
      }
      if (!still || cpu - last_cpu > 0.002) still_since = now;
      last_cpu = cpu;
      if (now - still_since >= std::chrono::seconds(2)) break;
    }
    const double waited = std::chrono::duration<double>(clock::now() - start).count();
    report(waited);
  }

  // Where in the lab's code thread `tid` waits (its line, and the statement's source), indented
  // under the thread's own line; "" when no frame of its stack is in the lab's code.
  static std::string waits_at(pid_t tid) {
    namespace code = workbook::testing::internal;
    char text[1536];
    if (code::describe_code_location(code::stack_of_thread(tid, std::chrono::milliseconds(300)),
                                     "waits", text, sizeof text) == 0)
      return "";
    std::string indented;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) indented += "    " + line + "\n";
    return indented;
  }

  void report(double waited) {
    std::vector<ThreadState> all;
    for (pid_t tid : thread_ids())
      if (tid != self_) all.push_back(thread_state(tid));
    const ThreadState caller = thread_state(getpid());
    // Read once (a signal to the thread and a stack walk): the cause and the listing both use it.
    const std::string caller_at = waits_at(caller.tid);
    std::string cause, state;
    {
      std::lock_guard lock(detail::registry().mutex);
      for (const WatchedPool* p : detail::registry().pools) {
        std::vector<ThreadState> workers;
        for (pid_t tid : p->workers()) workers.push_back(thread_state(tid));
        if (cause.empty())
          cause = detail::cause(*p, workers, caller, caller_at, throws_ == Throws::yes);
        state += "  a pool of " + std::to_string(p->size()) + " (" +
                 (p->destroying() ? "being destroyed" : "in use") +
                 "): of the tasks the test submitted itself, " + std::to_string(p->submitted()) +
                 " submitted, " + std::to_string(p->started()) + " started, " +
                 std::to_string(p->finished()) +
                 " finished (parallel_for's and process_batch's tasks go to the pool directly: "
                 "not counted here)\n";
        for (const ThreadState& w : workers)
          state += "    worker " + std::to_string(w.tid) + " " + detail::describe(w, p) + "\n" +
                   (w.ended() ? "" : waits_at(w.tid));
      }
      const WatchedPool* first =
          detail::registry().pools.empty() ? nullptr : detail::registry().pools.front();
      state += "  the test's thread " + std::to_string(caller.tid) + " " +
               detail::describe(caller, first) + "\n" + caller_at;
      for (const ThreadState& s : all) {
        bool known = s.tid == caller.tid;
        for (const WatchedPool* p : detail::registry().pools)
          known = known ||
                  std::find(p->workers().begin(), p->workers().end(), s.tid) != p->workers().end();
        if (!known)
          state += "  thread " + std::to_string(s.tid) + " (not a worker of the pool) " +
                   detail::describe(s, first) + "\n" + (s.ended() ? "" : waits_at(s.tid));
      }
    }
    const bool spinning =
        std::any_of(all.begin(), all.end(), [](const ThreadState& s) { return s.state == 'R'; });
    if (cause.empty() && spinning) {
      // Threads that keep waking each other (a mutex, a condition variable) may be making progress,
      // only far too slowly; a loop that never ends spins without a switch, or polls and yields.
      const long switches = switches_over(std::chrono::milliseconds(300));
      const std::string after =
          "threads still run after " + std::to_string(std::lround(waited)) + " s";
      cause = switches >= 300
                  ? after + ", and they keep handing the core to each other (" +
                        std::to_string(switches) +
                        " context switches in 0.3 s): either the work goes on, far slower than "
                        "it should (a great many tiny tasks, each a trip through the pool's mutex "
                        "and condition variable: a grain or chunk of a few elements makes one "
                        "task per few elements), or a thread polls in a loop that yields or "
                        "sleeps, for work or a flag that never comes. Count the tasks one call "
                        "submits, and time a smaller case"
                  : after +
                        ": a loop that never ends (a worker polling for work that never "
                        "comes, or a wait that spins on a condition no one sets)";
    }
    if (cause.empty())
      cause =
          "every thread is blocked and none of the states this test knows matches; where each "
          "one waits is listed below";
    const bool lines_shown = state.find(" waits at ") != std::string::npos;
    state += workbook::testing::internal::compiler_warnings_report();
    std::fprintf(stderr,
                 "\nFAIL %s: stuck after %.1f s: %s.\n%s\nWhat each thread was doing:\n%s"
                 "Edit labs/03_thread_pool/thread_pool.cpp%s. To see each thread's whole stack, "
                 "run this test under gdb (`gdb --args <test program> --gtest_filter=%s`, `run`, "
                 "then Ctrl-C and `thread apply all bt` once it hangs).\n",
                 test_.c_str(), waited, what_.c_str(), cause.c_str(), state.c_str(),
                 lines_shown ? ", from the lines each thread waits at (above)" : "", test_.c_str());
    const int left = ::testing::UnitTest::GetInstance()->test_to_run_count() -
                     ::testing::UnitTest::GetInstance()->successful_test_count() -
                     ::testing::UnitTest::GetInstance()->failed_test_count() -
                     ::testing::UnitTest::GetInstance()->skipped_test_count() - 1;
    if (left > 0)
      std::fprintf(stderr,
                   "The %d tests after it in this run were not run: a hung thread cannot be "
                   "stopped, so the program ends here.\n",
                   left);
    remember_hang(cause);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }

  // The context switches of every thread but the watchdog over `span`.
  long switches_over(std::chrono::milliseconds span) const {
    const auto total = [this] {
      long sum = 0;
      for (pid_t tid : thread_ids())
        if (tid != self_) sum += std::max(0L, threads::thread_switches(tid));
      return sum;
    };
    const long before = total();
    std::this_thread::sleep_for(span);
    return total() - before;
  }

  // True while a debugger (gdb) is attached: the student is looking at the threads already.
  static bool debugged() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("TracerPid:", 0) == 0) return std::stol(line.substr(10)) != 0;
    return false;
  }

  // --- Remembering a hang across the ctest run (each test is its own process) ---
  static std::string marker_path() {
    const char* dir = std::getenv("WORKBOOK_RESULTS_DIR");
    return dir && *dir ? std::string(dir) + "/lab03-hang.txt" : "";
  }
  // This program (its path and build time) under this ctest process (its id and start time), or ""
  // when not run by ctest: a run by hand, or a later ctest run, always runs every test.
  static std::string run_key() {
    if (marker_path().empty()) return "";
    const pid_t parent = getppid();
    const std::string proc = "/proc/" + std::to_string(parent);
    std::string comm, stat;
    std::getline(std::ifstream(proc + "/comm"), comm);
    if (comm != "ctest") return "";
    std::getline(std::ifstream(proc + "/stat"), stat);
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string field, started;
    for (int i = 3; i <= 22 && fields >> field; ++i) started = field;  // field 22: start time
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    struct stat info {};
    if (ec || ::stat(exe.c_str(), &info) != 0) return "";
    return exe.string() + " " + std::to_string(info.st_mtim.tv_sec) + "." +
           std::to_string(info.st_mtim.tv_nsec) + " ctest " + std::to_string(parent) + " " +
           started;
  }
  void remember_hang(const std::string& cause) const {
    const std::string key = run_key();
    if (key.empty()) return;
    std::string brief = cause.substr(0, cause.find(':'));
    std::ofstream(marker_path()) << key << "\n" << test_ << "\n" << brief << "\n";
  }

  std::string what_, test_;
  Throws throws_;
  std::chrono::seconds limit_;
  pid_t self_ = 0;
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::jthread thread_;  // last: started once the members it uses exist, joined before they go
};

inline WatchedPool::~WatchedPool() {
  // Each sleeping worker's context switches as the destructor starts: one that switched again by
  // the time the destruction hangs was woken and went back to sleep; one that did not was never
  // woken. (Workers that just finished a task get back to their wait within microseconds: up
  // to 50 ms are given them.)
  for (int i = 0; i < 50 && !all_asleep(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (pid_t tid : workers_)
    switches_at_destruction_.push_back(thread_state(tid).in_futex() ? threads::thread_switches(tid)
                                                                    : -1);
  destroying_ = true;
  if (Watchdog::alive() == 0)
    destruction_watchdog_ = std::make_unique<Watchdog>(
        "destroying a pool of " + std::to_string(size_) + (size_ == 1 ? " thread" : " threads") +
        " once the test's calls returned");
}

/// CPU time used by the threads of `pool` (its workers) so far, in seconds: with
/// thread_cpu_seconds, each thread's own clock. Threads that have ended count no more.
inline double workers_cpu_seconds(const WatchedPool& pool) {
  double sum = 0;
  for (pid_t tid : pool.workers()) sum += std::max(0.0, thread_cpu_seconds(tid));
  return sum;
}

}  // namespace lab03::testing
