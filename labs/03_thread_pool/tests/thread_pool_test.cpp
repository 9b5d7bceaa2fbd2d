// Lab 03 visible tests: the pool's promises one by one (every task runs exactly once, on a worker;
// exceptions reach the caller; nothing is lost when the pool is destroyed; idle threads sleep),
// parallel_for's chunks and exceptions, parallel_relu against the oracle, process_batch's order.
// Each TEST is its own ctest test: `ctest --preset lab03 -R ThreadPool` runs the pool's. A test
// that a broken pool could hang runs under a Watchdog, which ends it with an explanation instead.
#include "thread_pool.hpp"

#include "batch_ops.hpp"
#include "lab03_testing.hpp"
#include "thread_pool_oracle.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <latch>
#include <limits>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace lab03 {
// How GoogleTest prints a Range in a failure message.
inline void PrintTo(const Range& r, std::ostream* out) {
  *out << "[" << r.begin << ", " << r.end << ")";
}
}  // namespace lab03

namespace {

using lab03::Range;
using lab03::Tensor;
using lab03::ThreadPool;
using lab03::testing::kPoolSizes;
using lab03::testing::kTsanCommand;
using lab03::testing::kUnderTsan;
using lab03::testing::Watchdog;
using lab03::testing::WatchedPool;
using lab03::threads::this_thread_id;
using lab03::threads::thread_cpu_seconds;
using lab03::threads::thread_ids;
using workbook::as_span;
using workbook::CheckResult;
using workbook::GuardedBuffer;
using workbook::Specificity;
using workbook::testing::Cases;
using namespace std::chrono_literals;

std::string pool_of(unsigned threads) {
  return "a pool of " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

// How many times each of n things happened, counted from several threads at once.
class Counts {
 public:
  explicit Counts(std::size_t n) : counts_(n) {}
  void add(std::size_t i) { counts_.at(i).fetch_add(1, std::memory_order_relaxed); }
  // "" when each happened exactly once, else a description of the first that did not.
  std::string not_once(const std::string& thing) const {
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      const int c = counts_[i].load();
      if (c != 1)
        return thing + " " + std::to_string(i) + " ran " + std::to_string(c) +
               " times instead of once" +
               (c > 1 ? std::string(". Something that runs twice is most often a race between "
                                    "threads: ") +
                            kTsanCommand +
                            " builds your thread_pool.cpp with ThreadSanitizer and runs these "
                            "tests under it, which names the two unordered accesses"
                      : "");
    }
    return "";
  }
  // Did anything happen more than once? (With others never happening: tasks that ran the wrong
  // chunk.)
  bool some_more_than_once() const {
    return std::any_of(counts_.begin(), counts_.end(), [](const auto& c) { return c.load() > 1; });
  }
  // The things that did not happen exactly once.
  std::vector<std::size_t> not_once() const {
    std::vector<std::size_t> wrong;
    for (std::size_t i = 0; i < counts_.size(); ++i)
      if (counts_[i].load() != 1) wrong.push_back(i);
    return wrong;
  }

 private:
  std::vector<std::atomic<int>> counts_;
};

// The message of an exception, "" for none.
std::string message_of(const std::exception_ptr& error) {
  if (!error) return "";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "(an exception that is not a std::exception)";
  }
}

// A call under test that threw on n elements and a pool of `threads`, as a failed check: Cases then
// reports it with its case and the cases that passed, instead of GoogleTest's bare "thrown in the
// test body" that names no case. Sizes smaller than the pool are where a share computed as
// n / threads becomes 0.
CheckResult threw(const char* function, const std::exception& e, std::size_t n, unsigned threads) {
  CheckResult r;
  r.ok = false;
  r.summary = std::string(function) + " threw: " + e.what();
  r.edit = "edit labs/03_thread_pool/thread_pool.cpp: " + std::string(function);
  // What the exception says decides between the two causes a size below the pool's has.
  std::string what = e.what();
  std::transform(what.begin(), what.end(), what.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto* future_error = dynamic_cast<const std::future_error*>(&e);
  if (future_error && future_error->code() == std::future_errc::no_state) {
    r.specificity = Specificity::pattern;
    r.diagnosis =
        "a std::future with no task behind it was waited on (std::future_error, no_state): a "
        "default-constructed future, never assigned one that submit returned. Most often a "
        "vector of futures made with a size (std::vector<std::future<void>> futures(k)) and then "
        "filled with push_back, which leaves its first k empty: reserve(k) instead, or assign "
        "futures[i] = pool.submit(...). A call that leaves early this way returns while its "
        "tasks may still be running with what it owned, so a crash can follow";
  } else if (future_error && future_error->code() == std::future_errc::broken_promise) {
    r.specificity = Specificity::pattern;
    r.diagnosis =
        "a task was destroyed without running (std::future_error, broken_promise): its future "
        "was waited on, but the pool dropped the task from its queue (a queue cleared, or a "
        "task moved from twice) instead of running it";
  } else if (future_error && future_error->code() == std::future_errc::future_already_retrieved) {
    r.specificity = Specificity::pattern;
    r.diagnosis =
        "get_future() was called twice on one task (std::future_error, "
        "future_already_retrieved): take each task's future once, in submit";
  } else if (n == 0 && what.find("grain") == std::string::npos) {
    r.specificity = Specificity::pattern;
    r.diagnosis =
        "the inputs are valid: n = 0, an empty range (begin == end), has nothing to "
        "run and must be accepted, and your code rejected it (\"" +
        std::string(e.what()) +
        "\"). Look at the check that threw: only a range whose end lies before its "
        "begin is invalid (range.end < range.begin, not <=)";
  } else if (n < threads) {
    r.specificity = Specificity::pattern;
    r.diagnosis = "the inputs are valid, and n = " + std::to_string(n) + " is smaller than the " +
                  "pool (" + pool_of(threads) + "): a chunk size computed as n / pool.size() is " +
                  "0 here, and parallel_for rejects a grain of 0. Give every chunk at least one " +
                  "element (std::max<std::size_t>(1, ...)), or call parallel_for with a grain " +
                  "that does not depend on n alone";
  } else {
    r.specificity = Specificity::observed;
    r.diagnosis =
        "the inputs are valid here, so nothing should be thrown; compare the cases that "
        "failed with those that passed (below)";
  }
  return r;
}

// What call(pool) throws on a fresh pool of `threads`, looked at only once the pool is destroyed.
// Why wait: libstdc++ is not built with ThreadSanitizer, so TSan cannot see the atomic reference
// count of an exception; reading an exception while a worker may still be dropping its reference to
// it (the packaged_task that carried it) would be reported as a race, falsely.
std::exception_ptr thrown_by(unsigned threads, const std::function<void(ThreadPool&)>& call) {
  std::exception_ptr error;
  WatchedPool pool(threads);
  try {
    call(pool);
  } catch (const workbook::NotImplemented&) {
    throw;  // a step not written yet: not the exception under test
  } catch (...) {
    error = std::current_exception();
  }
  return error;  // the pool is destroyed first (its workers joined), then the caller looks
}

// --- Step 1: ThreadPool --------------------------------------------------------------------------

TEST(ThreadPool, RejectsZeroThreads) {
  EXPECT_THROW({ ThreadPool pool(0); }, std::invalid_argument);
}

TEST(ThreadPool, RunsTasksOnAllItsWorkersAtOnce) {
  for (unsigned n : kPoolSizes) {
    // n tasks that each wait until all n have started: they finish only if n workers run them at
    // the same time, each on its own thread.
    Watchdog watchdog(std::to_string(n) + (n == 1 ? " task on " : " tasks on ") + pool_of(n) +
                      ", each waiting for the others to start");
    WatchedPool pool(n);
    ASSERT_EQ(pool.size(), n);
    pool.wait_until_idle();  // as between two calls: each task must wake a sleeping worker
    std::latch all_started(n);
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::set<pid_t> tids;
    std::vector<std::future<void>> done;
    for (unsigned t = 0; t < n; ++t) {
      done.push_back(pool.submit([&] {
        {
          std::lock_guard lock(mutex);
          threads.insert(std::this_thread::get_id());
          tids.insert(this_thread_id());
        }
        all_started.arrive_and_wait();
      }));
    }
    for (std::future<void>& f : done) f.get();
    EXPECT_EQ(threads.size(), n) << "the tasks ran on " << threads.size()
                                 << " threads, not on the pool's " << n;
    EXPECT_FALSE(threads.contains(std::this_thread::get_id()))
        << "a task ran on the thread that submitted it: tasks belong on the workers";
    const std::set<pid_t> workers(pool.workers().begin(), pool.workers().end());
    EXPECT_TRUE(!lab03::threads::visible() ||
                std::includes(workers.begin(), workers.end(), tids.begin(), tids.end()))
        << "with " << pool_of(n) << ": tasks ran on threads that the pool's constructor did not "
        << "start (it started " << workers.size() << "). Tasks must run on the pool's own "
        << "workers, started once: a thread started per task (std::thread or std::async in "
        << "submit()) costs tens of microseconds each";
  }
}

TEST(ThreadPool, RunsEveryTaskExactlyOnce) {
  const std::size_t tasks = kUnderTsan ? 2000 : 20000;
  for (unsigned n : kPoolSizes) {
    Watchdog watchdog(std::to_string(tasks) + " tiny tasks on " + pool_of(n));
    Counts runs(tasks);
    {
      WatchedPool pool(n);
      std::vector<std::future<void>> done;
      done.reserve(tasks);
      for (std::size_t i = 0; i < tasks; ++i)
        done.push_back(pool.submit([&runs, i] { runs.add(i); }));
      for (std::future<void>& f : done) f.get();
    }
    ASSERT_EQ(runs.not_once("task"), "") << "with " << pool_of(n);
  }
}

TEST(ThreadPool, WorkersStayWhenTheyFindTheQueueEmpty) {
  // Bursts of 1 to 3 tiny tasks: a worker woken for a task often finds that another one, just done
  // with its own, took it first (and a wait may end for nothing). It must wait again, not leave:
  // the pool keeps all its workers. Checked between bursts, before a pool left without workers
  // would make a task wait forever.
  if (!lab03::threads::visible()) GTEST_SKIP() << "/proc/self/task cannot be read here";
  const unsigned n = 4;
  Watchdog watchdog("bursts of tiny tasks on " + pool_of(n));
  WatchedPool pool(n);
  const char* const stay =
      ": work() returned before the pool was stopping. A worker may find the queue empty when it "
      "wakes (another worker took the task first, or a spurious wake-up), so it must wait in a "
      "loop until there is a task or stopping_ is set: work_available_.wait(lock, [this] { return "
      "stopping_ || !queue_.empty(); }), and return only when stopping_ is set and the queue is "
      "empty.";
  // Workers that end at once may be gone before the test first looks (on a loaded machine).
  ASSERT_EQ(pool.workers().size(), n)
      << "only " << pool.workers().size() << " of the pool's " << n
      << " worker threads were alive when the test looked, right after its constructor: either "
         "the constructor never started them, or the workers ended while the pool is still in use "
         "(not being destroyed), before any task"
      << stay;
  pool.wait_until_idle();
  const std::size_t rounds = kUnderTsan ? 500 : 5000;
  for (std::size_t r = 0; r <= rounds; ++r) {
    if (r % 50 == 0) {
      const std::vector<pid_t> alive = lab03::threads::thread_ids();
      std::size_t gone = 0;
      for (pid_t w : pool.workers()) gone += !std::binary_search(alive.begin(), alive.end(), w);
      ASSERT_EQ(gone, 0u) << gone << " of the pool's " << pool.workers().size()
                          << " workers ended while the pool "
                          << "is still in use (not being destroyed), "
                          << (r == 0 ? "before any task" : "after ")
                          << (r == 0 ? std::string() : std::to_string(r) + " bursts of tasks")
                          << stay;
    }
    std::vector<std::future<void>> done;
    for (std::size_t t = 0; t <= r % 3; ++t) done.push_back(pool.submit([] {}));
    for (std::future<void>& f : done) f.get();
  }
}

TEST(ThreadPool, FutureCarriesTheTaskException) {
  Watchdog watchdog("a task that throws, then 10 more tasks", Watchdog::Throws::yes);
  std::atomic<int> ran{0};
  const std::exception_ptr error = thrown_by(2, [&](ThreadPool& pool) {
    std::future<void> failed = pool.submit([] { throw std::runtime_error("task 7 failed"); });
    std::exception_ptr from_future;
    try {
      failed.get();
    } catch (...) {
      from_future = std::current_exception();
    }
    // The worker that ran it must have survived: the pool still runs tasks.
    std::vector<std::future<void>> done;
    for (int i = 0; i < 10; ++i) done.push_back(pool.submit([&ran] { ++ran; }));
    for (std::future<void>& f : done) f.get();
    if (from_future) std::rethrow_exception(from_future);
  });
  EXPECT_EQ(message_of(error), "task 7 failed") << "the future of a task that threw must rethrow "
                                                   "its exception from get() (std::packaged_task "
                                                   "stores it in the future)";
  EXPECT_EQ(ran.load(), 10) << "after a task threw, the pool stopped running tasks";
}

TEST(ThreadPool, RejectsAnEmptyTask) {
  Watchdog watchdog("submitting an empty std::function to a pool of 1 thread");
  WatchedPool pool(1);
  EXPECT_THROW(pool.submit(std::function<void()>()), std::invalid_argument);
}

TEST(ThreadPool, DestructorFinishesQueuedTasks) {
  Watchdog watchdog("destroying a pool with 100 tasks still queued");
  std::atomic<int> ran{0};
  std::vector<std::future<void>> done;
  std::promise<void> gate;
  std::jthread opener;
  {
    WatchedPool pool(1);
    // The first task holds the only worker until the gate opens, so the other 100 wait in the
    // queue.
    std::shared_future<void> open = gate.get_future().share();
    done.push_back(pool.submit([open, &ran] {
      open.wait();
      ++ran;
    }));
    for (int i = 0; i < 100; ++i) done.push_back(pool.submit([&ran] { ++ran; }));
    // The gate opens 50 ms from now, when the pool's destructor below is already running.
    opener = std::jthread([&gate] {
      std::this_thread::sleep_for(50ms);
      gate.set_value();
    });
  }
  EXPECT_EQ(ran.load(), 101)
      << "the pool was destroyed with 100 tasks in its queue behind a running one, and ran "
      << ran.load() << " of the 101: the destructor must let the workers finish every task "
      << "already submitted (they leave when the pool is stopping *and* the queue is empty)";
  for (std::future<void>& f : done) EXPECT_EQ(f.wait_for(0s), std::future_status::ready);
}

TEST(ThreadPool, TasksMaySubmitTasks) {
  Watchdog watchdog("a chain of 100 tasks, each submitting the next");
  // Each task submits the next one. A worker that holds the mutex while it runs a task deadlocks
  // here, when the task's submit() asks for the same mutex.
  std::promise<void> last_ran;
  std::atomic<int> ran{0};
  std::function<void()> link;
  WatchedPool pool(2);  // declared after what its tasks use, so destroyed (and drained) first
  link = [&] {
    if (++ran == 100)
      last_ran.set_value();
    else
      pool.submit(link);
  };
  pool.submit(link);
  last_ran.get_future().get();
  EXPECT_EQ(ran.load(), 100);
}

TEST(ThreadPool, DestructorFinishesTasksSubmittedByTasks) {
  Watchdog watchdog("destroying a pool whose tasks submit more tasks");
  std::atomic<int> ran{0};
  {
    std::function<void()> link;
    WatchedPool pool(2);
    link = [&] {
      if (++ran < 50) pool.submit(link);
    };
    pool.submit(link);
  }  // the destructor starts while the chain is still growing: it must finish the whole chain
  EXPECT_EQ(ran.load(), 50)
      << "tasks submitted by tasks while the pool was being destroyed were lost";
}

// What one thread did while the test waited: its CPU time (its own clock) and how many times it
// left its core. Unlike the process's CPU time against a wall clock, these show a thread that
// polls however loaded the machine is: a spinning thread uses CPU, a yielding one is switched at
// every turn, and a sleeping one does neither.
struct Activity {
  pid_t tid = 0;
  double cpu = 0;
  long switches = 0;
  // A sleeping thread uses microseconds of CPU and leaves its core a few times at most in 300 ms;
  // a polling one, even on a machine so loaded that it seldom runs, more of either.
  bool polls() const { return cpu > 0.005 || switches > 20; }
};

// The most active of `threads` while `wait` runs.
Activity busiest_during(const std::vector<pid_t>& threads, const std::function<void()>& wait) {
  std::vector<Activity> seen;
  for (pid_t tid : threads)
    seen.push_back({tid, thread_cpu_seconds(tid), lab03::threads::thread_switches(tid)});
  wait();
  Activity most;
  for (Activity& a : seen) {
    a.cpu = std::max(0.0, thread_cpu_seconds(a.tid) - a.cpu);
    a.switches = std::max(0L, lab03::threads::thread_switches(a.tid) - a.switches);
    if (a.polls() > most.polls() || (a.polls() == most.polls() && a.cpu > most.cpu)) most = a;
  }
  return most;
}

std::string activity_text(const Activity& a) {
  return "used " + std::to_string(std::lround(1000 * a.cpu)) +
         " ms of CPU time (its own clock) and left its core " + std::to_string(a.switches) +
         " times";
}

TEST(ThreadPool, IdleWorkersSleep) {
  Watchdog watchdog("a pool of 2 threads with nothing to do for 300 ms");
  WatchedPool pool(2);
  pool.submit([] {}).get();  // the workers have started and found the queue empty
  const Activity a = busiest_during(pool.workers(), [] { std::this_thread::sleep_for(300ms); });
  EXPECT_FALSE(a.polls())
      << "with nothing to do for 300 ms, worker thread " << a.tid << " " << activity_text(a)
      << ": the pool's workers busy-wait (check the queue in a "
         "loop, or std::this_thread::yield()). Wait on the condition variable instead: a "
         "sleeping thread uses no CPU, and another program can use the core.";
}

// --- Step 2: parallel_for ------------------------------------------------------------------------

// The chunks parallel_for must make, in order.
std::vector<Range> expected_chunks(Range range, std::size_t grain) {
  std::vector<Range> chunks;
  for (std::size_t b = range.begin; b < range.end; b += grain)
    chunks.push_back({b, std::min(b + grain, range.end)});
  return chunks;
}

// Every chunk parallel_for called body with, in the order of their beginnings.
std::vector<Range> chunks_of(ThreadPool& pool, Range range, std::size_t grain) {
  std::mutex mutex;
  std::vector<Range> seen;
  lab03::parallel_for(pool, range, grain, [&](Range r) {
    std::lock_guard lock(mutex);
    seen.push_back(r);
  });
  std::sort(seen.begin(), seen.end(), [](Range a, Range b) { return a.begin < b.begin; });
  return seen;
}

// Chunks as text, the first few and the last: "[0, 3), [3, 6), ... [9, 10) (4 chunks)".
std::string chunks_text(const std::vector<Range>& chunks) {
  std::string text;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (i == 4 && chunks.size() > 6) {
      text += "..., ";
      i = chunks.size() - 1;
    }
    text += '[';
    text += std::to_string(chunks[i].begin) + ", " + std::to_string(chunks[i].end) + ")";
    if (i + 1 < chunks.size()) text += ", ";
  }
  return (text.empty() ? "none" : text) + " (" + std::to_string(chunks.size()) + " chunks)";
}

// The chunks seen against the right ones, as a check: the catalogue's mistake they match exactly
// (thread_pool_mistakes.hpp), else a race when a second call made other chunks, else what was seen.
CheckResult check_chunks(Range range, std::size_t grain, const std::vector<Range>& seen,
                         bool varies) {
  CheckResult r;
  const std::vector<Range> right = expected_chunks(range, grain);
  if (seen == right) return r;
  r.ok = false;
  r.summary = "parallel_for over [" + std::to_string(range.begin) + ", " +
              std::to_string(range.end) + ") with grain " + std::to_string(grain) +
              " made the wrong chunks";
  r.details = "  got:      " + chunks_text(seen) + "\n  expected: " + chunks_text(right) + "\n";
  r.edit = "edit labs/03_thread_pool/thread_pool.cpp: parallel_for";
  for (const lab03::mistakes::ChunkMistake& m : lab03::mistakes::chunk_catalogue(range, grain))
    if (!varies && seen == m.chunks) {
      r.mistake = m.what;
      r.diagnosis = "your chunks match " + m.what + ": " + m.advice;
      r.specificity = Specificity::mistake;
      return r;
    }
  const bool repeated = std::adjacent_find(seen.begin(), seen.end()) != seen.end();
  if (varies) {
    r.unstable = true;
    r.specificity = Specificity::pattern;
    r.diagnosis = std::string("a second call made other chunks: a race between the tasks. ") +
                  kTsanCommand +
                  " runs these tests on your code under ThreadSanitizer, which names the two "
                  "unordered accesses" +
                  (repeated ? ". Some chunks ran twice: often a task lambda captures the loop's "
                              "chunk by reference ([&]) and reads it when the task starts, after "
                              "the loop has moved on; capture it by value"
                            : "");
    return r;
  }
  r.specificity = Specificity::observed;
  r.diagnosis =
      "the chunks are [begin, begin + grain), [begin + grain, begin + 2 grain), ..., the "
      "last one shorter, ending at range.end; each exactly once";
  return r;
}

TEST(ParallelFor, EveryIndexInExactlyOneChunk) {
  // Empty ranges, one index, fewer indices than workers, a grain that does not divide the size, a
  // grain larger than the range, a range that does not start at 0.
  const std::pair<Range, std::size_t> ranges[] = {
      {{0, 0}, 1}, {{5, 5}, 4},      {{0, 1}, 1},     {{0, 2}, 1},    {{0, 10}, 3},
      {{0, 3}, 5}, {{7, 100}, 1000}, {{3, 1003}, 10}, {{0, 1000}, 1}, {{100, (1 << 20) + 5}, 4096}};
  Cases cases(lab03::oracle::where("parallel_for"));
  for (unsigned n : kPoolSizes) {
    WatchedPool pool(n);
    for (const auto& [range, grain] : ranges) {
      const std::string what = "parallel_for over [" + std::to_string(range.begin) + ", " +
                               std::to_string(range.end) + ") in chunks of " +
                               std::to_string(grain) + " on " + pool_of(n);
      cases.next(what);
      Watchdog watchdog(what);
      const std::vector<Range> seen = chunks_of(pool, range, grain);
      // Once more, if wrong: chunks that come out differently from the same call are a race.
      const bool varies =
          seen != expected_chunks(range, grain) && chunks_of(pool, range, grain) != seen;
      cases.check(check_chunks(range, grain, seen, varies));
    }
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(ParallelFor, RejectsZeroGrainAndReversedRange) {
  Watchdog watchdog("parallel_for with a grain of 0 and with a reversed range");
  WatchedPool pool(2);
  EXPECT_THROW(lab03::parallel_for(pool, {0, 10}, 0, [](Range) {}), std::invalid_argument);
  EXPECT_THROW(lab03::parallel_for(pool, {10, 0}, 1, [](Range) {}), std::invalid_argument);
}

TEST(ParallelFor, ManyTinyChunks) {
  // Stress: one index per chunk, so that any race between chunks (a chunk lost, run twice, or a
  // future waited for too early) has many chances to show.
  const std::size_t n = kUnderTsan ? 20000 : 200000;
  for (unsigned threads : {2u, 8u}) {
    Watchdog watchdog("parallel_for over " + std::to_string(n) + " chunks of one index on " +
                      pool_of(threads));
    WatchedPool pool(threads);
    const auto run = [&] {
      auto counts = std::make_unique<Counts>(n);
      lab03::parallel_for(pool, {0, n}, 1, [&](Range r) {
        for (std::size_t i = r.begin; i < r.end; ++i) counts->add(i);
      });
      return counts;
    };
    const auto counts = run();
    if (counts->not_once().empty()) continue;
    // Once more: a mistake in the chunks gives the same wrong indices every time, a race others.
    const bool varies = run()->not_once() != counts->not_once();
    FAIL() << "with " << pool_of(threads) << ": " << counts->not_once("index")
           << (counts->some_more_than_once()
                   ? ". Some indices ran twice and others never: the tasks did not run the chunks "
                     "they were made for, a race between the tasks. Often a task lambda captures "
                     "the loop's chunk or index by reference ([&]) and reads it when the task "
                     "starts, after the loop has moved on; capture it by value"
                   : "")
           << (varies ? std::string(". The indices that went wrong changed between two runs of "
                                    "the same call: a race. ") +
                            kTsanCommand +
                            " runs these tests on your code under ThreadSanitizer, which names "
                            "the two unordered accesses and their lines"
                      : std::string(". The same indices went wrong in a second run: look at how "
                                    "the chunks are cut"));
  }
}

// A chunk's exception that counts its live copies: one whose copies are all gone while other
// chunks still run was caught and dropped where its chunk ran, for a future (or a record of
// failures) would still hold it.
struct CountedError : std::runtime_error {
  std::atomic<int>& alive;
  CountedError(const char* what, std::atomic<int>& count) : std::runtime_error(what), alive(count) {
    ++alive;
  }
  CountedError(const CountedError& other) : std::runtime_error(other), alive(other.alive) {
    ++alive;
  }
  ~CountedError() override { --alive; }
};

// What a parallel_for that returned normally although chunks threw did with the exception, from
// its live copies once the other chunks had run (-1: unknown).
std::string where_the_exception_went(int alive_after_the_others) {
  if (alive_after_the_others == 0)
    return "the exception no longer existed while the other chunks still ran: the code that "
           "runs a chunk catches its exception and drops it (a catch (...) that neither stores "
           "nor rethrows it). Let it reach the chunk's future (a packaged_task stores it), or "
           "store it (std::current_exception()) and rethrow the lowest-numbered chunk's after "
           "all have run.";
  return "an exception in a chunk must reach the caller. get() every chunk's future, in chunk "
         "order: wait() alone does not rethrow";
}

TEST(ParallelFor, RethrowsTheLowestFailingChunkAfterRunningAll) {
  // What each pool did, all looked at before any is reported: on one thread the chunks run in
  // order, so a parallel_for that waits for its last future only has nothing left running there,
  // and only a larger pool shows that it returns early.
  struct Outcome {
    unsigned threads = 0;
    std::exception_ptr error;
    int finished_at_return = -1;  // chunks finished (returned or threw) when parallel_for returned
    int started_at_return = -1;   // chunks started by then
    int started_at_all = 0;       // chunks started by the end, a while after it returned
    std::string not_once;
    // Copies of chunk 30's exception alive when the last chunk ran, on a pool of one thread
    // (chunks in order): 0 means it was caught and dropped where the chunk ran, for a future (or
    // a record of failures) would still hold it.
    int chunk_30_alive_at_chunk_99 = -1;
  };
  std::vector<Outcome> outcomes;
  for (unsigned n : kPoolSizes) {
    Watchdog watchdog("parallel_for with two chunks that throw, on " + pool_of(n),
                      Watchdog::Throws::yes);
    Counts counts(100);
    std::atomic<int> started{0}, finished{0}, alive{0};
    Outcome o{.threads = n};
    // The body outlives the pool: a parallel_for that returns early leaves chunks running, and
    // they must find it still there (or the test crashes instead of saying what was wrong).
    const std::function<void(Range)> body = [&](Range r) {
      struct Finished {
        std::atomic<int>& count;
        ~Finished() { ++count; }
      } done{finished};
      ++started;
      counts.add(r.begin);
      // Chunk 70 throws at once, chunk 30 a little later: the lowest-numbered one must win, not
      // the first in time, so that the caller sees the same exception on every run.
      if (r.begin == 30) {
        std::this_thread::sleep_for(20ms);
        throw CountedError("chunk 30", alive);
      }
      if (r.begin == 70) throw std::runtime_error("chunk 70");
      if (r.begin == 99 && n == 1) o.chunk_30_alive_at_chunk_99 = alive.load();
    };
    o.error = thrown_by(n, [&](ThreadPool& pool) {
      struct AtReturn {
        const std::atomic<int>&started, &finished;
        int &seen_started, &seen_finished;
        ~AtReturn() {  // on return and on throw alike
          seen_finished = finished.load();
          seen_started = started.load();
        }
      } at_return{started, finished, o.started_at_return, o.finished_at_return};
      lab03::parallel_for(pool, {0, 100}, 1, body);
    });
    o.started_at_all = started.load();  // the pool is gone: whatever was queued ran or never will
    o.not_once = counts.not_once("chunk");
    outcomes.push_back(std::move(o));
  }
  // Not waiting for every chunk also loses their exceptions: name the cause, not the symptom.
  for (const Outcome& o : outcomes) {
    if (o.finished_at_return == 100 || o.finished_at_return == -1) continue;
    // More runs than chunks is what happened, whatever the order of the rest.
    if (o.finished_at_return > 100)
      FAIL() << "with " << pool_of(o.threads) << ", body ran " << o.finished_at_return
             << " times for the 100 chunks of [0, 100) with grain 1: more chunks than the range "
                "holds, so one ran past its end or ran twice. Count the chunks as (size + grain - "
                "1) / grain, end the last one at range.end, and give each chunk to exactly one "
                "task.";
    const std::string when =
        "with " + pool_of(o.threads) + ", parallel_for " + (o.error ? "threw" : "returned") +
        " while only " + std::to_string(o.finished_at_return) + " of its 100 chunks had finished";
    // None running then, and none started later: the others were never run at all.
    if (o.started_at_return == o.finished_at_return && o.started_at_all == o.started_at_return)
      FAIL() << when << ", none was running, and the other " << 100 - o.started_at_all
             << " never started, even after the pool was destroyed: the exception of chunk 30 or "
                "70 ended the loop that runs the chunks (a task that runs a range of chunks, or a "
                "worker, left its loop with it). Every chunk must run even when one throws: catch "
                "the exception of each chunk where it runs (a packaged_task does it for you: its "
                "future holds the exception), go on with the next chunk, and rethrow the "
                "lowest-numbered one's after all have run.";
    FAIL() << when << ": it must wait for every chunk's future (wait() on each, then get() each "
           << "in chunk order), not only some of them. A chunk still running uses body and the "
              "caller's data, which are gone once parallel_for returns; and the exception of a "
              "chunk not waited for is lost.";
  }
  // Lost on some pools only: the chunks ran, the exception was kept, and the way the threads'
  // results are combined loses it. Lost on every pool: either the task dropped it where the chunk
  // ran, or nothing looked at the futures (or records) that hold it.
  std::string rethrew_on, lost_on;
  for (const Outcome& o : outcomes) {
    std::string& list = o.error ? rethrew_on : lost_on;
    list += (list.empty() ? "" : ", ") + std::to_string(o.threads);
  }
  if (!rethrew_on.empty() && !lost_on.empty())
    FAIL() << "parallel_for rethrew a chunk's exception on pools of " << rethrew_on
           << " thread(s), but returned normally on pools of " << lost_on
           << ", after every chunk ran once: the exceptions are kept, and lost where your code "
              "combines what several threads or tasks recorded (a comparison that picks the "
              "lowest failing chunk inverted, so that it picks a record of no failure; or one "
              "thread's record overwriting another's). Pick the failure with the lowest chunk "
              "number among those that hold an exception.";
  static_assert(kPoolSizes[0] == 1, "outcomes.front() is the pool of one thread");
  const int alive_on_one_thread = outcomes.front().chunk_30_alive_at_chunk_99;
  for (const Outcome& o : outcomes) {
    ASSERT_TRUE(o.error) << "with " << pool_of(o.threads)
                         << ", parallel_for returned normally although chunks 30 and 70 threw, "
                            "after all 100 chunks had finished: "
                         << where_the_exception_went(alive_on_one_thread);
    EXPECT_EQ(message_of(o.error), "chunk 30")
        << "with " << pool_of(o.threads) << ": rethrow the exception of the "
        << "lowest-numbered chunk that threw (get() the futures in chunk order)";
    EXPECT_EQ(o.not_once, "") << "with " << pool_of(o.threads)
                              << ": every chunk must run once, even when others throw";
  }
}

TEST(ParallelFor, ReturnsOnlyAfterEveryChunkFinished) {
  Watchdog watchdog("parallel_for whose chunk 0 throws while chunk 1 still runs",
                    Watchdog::Throws::yes);
  WatchedPool pool(2);
  std::atomic<bool> slow_chunk_finished{false}, chunk_0_threw{false};
  std::atomic<int> alive{0}, alive_when_chunk_1_ended{-1};
  bool threw = false;
  try {
    lab03::parallel_for(pool, {0, 2}, 1, [&](Range r) {
      if (r.begin == 0) {
        chunk_0_threw = true;
        throw CountedError("chunk 0", alive);
      }
      std::this_thread::sleep_for(100ms);
      if (chunk_0_threw) alive_when_chunk_1_ended = alive.load();
      slow_chunk_finished = true;
    });
  } catch (const std::runtime_error&) {
    threw = true;
  }
  EXPECT_TRUE(threw) << "parallel_for returned normally although chunk 0 threw: "
                     << where_the_exception_went(alive_when_chunk_1_ended);
  EXPECT_TRUE(slow_chunk_finished) << "parallel_for rethrew chunk 0's exception while chunk 1 was "
                                      "still running. A running chunk "
                                      "uses body, which belongs to the caller and is gone once "
                                      "parallel_for returns: wait for every "
                                      "future first, then get() them.";
}

TEST(ParallelFor, ChunksRunOnThePoolsWorkers) {
  // The pool's workers are started once, by its constructor; parallel_for hands them tasks. The
  // thread that called may run chunks too (as the reference does), but no other thread.
  Watchdog watchdog("parallel_for over 64 chunks on a pool of 2 threads, twice");
  WatchedPool pool(2);
  std::set<pid_t> allowed(pool.workers().begin(), pool.workers().end());
  allowed.insert(this_thread_id());
  const std::vector<pid_t> before = thread_ids();
  std::mutex mutex;
  std::set<pid_t> ran_on;
  for (int call = 0; call < 2; ++call)
    lab03::parallel_for(pool, {0, 64}, 1, [&](Range) {
      std::lock_guard lock(mutex);
      ran_on.insert(this_thread_id());
    });
  std::vector<pid_t> others, new_ones;
  std::set_difference(ran_on.begin(), ran_on.end(), allowed.begin(), allowed.end(),
                      std::back_inserter(others));
  for (pid_t tid : others)
    if (!std::binary_search(before.begin(), before.end(), tid)) new_ones.push_back(tid);
  EXPECT_TRUE(!lab03::threads::visible() || others.empty())
      << "parallel_for ran chunks on " << others.size() << " threads that are neither the pool's "
      << pool.size() << " workers nor the thread that called it"
      << (new_ones.size() == others.size()
              ? ", threads that did not exist before the call: parallel_for starts threads of its "
                "own on every call (std::thread, std::jthread or std::async) instead of "
                "submitting tasks to the pool. Each thread costs tens of microseconds to start; "
                "the pool's workers are started once."
              : ": submit the chunks to this pool, whose workers the caller chose.");
  // And some chunks do run on a worker: 32 chunks that each sleep 1 ms leave the workers ample
  // time to wake and take their share, however the caller helps.
  std::set<pid_t> slow_ran_on;
  lab03::parallel_for(pool, {0, 32}, 1, [&](Range) {
    {
      std::lock_guard lock(mutex);
      slow_ran_on.insert(this_thread_id());
    }
    std::this_thread::sleep_for(1ms);
  });
  EXPECT_TRUE(!lab03::threads::visible() ||
              std::any_of(slow_ran_on.begin(), slow_ran_on.end(),
                          [&](pid_t tid) { return tid != this_thread_id(); }))
      << "parallel_for over 32 chunks that each sleep 1 ms ran every one on the thread that "
         "called it, none on the pool's 2 workers: it took the path meant for a call from inside "
         "one of the pool's own tasks. Look at the test that chooses it: run the chunks inline "
         "only when pool.is_worker_thread() is true (a nested call); a call from outside the "
         "pool submits them.";
}

TEST(ParallelFor, WaitingCallerSleeps) {
  Watchdog watchdog("parallel_for over two chunks that sleep 300 ms each");
  WatchedPool pool(2);
  std::vector<pid_t> threads = pool.workers();
  threads.push_back(this_thread_id());
  const Activity a = busiest_during(threads, [&] {
    lab03::parallel_for(pool, {0, 2}, 1, [](Range) { std::this_thread::sleep_for(300ms); });
  });
  EXPECT_FALSE(a.polls())
      << "while its two chunks slept for 300 ms, "
      << (a.tid == this_thread_id() ? "the thread that called parallel_for" : "worker thread")
      << " " << a.tid << " " << activity_text(a)
      << ": it busy-waits (a loop over future.wait_for(0s), or "
         "a worker polling the queue). future.wait() and condition variables sleep.";
}

TEST(ParallelFor, SameSumOnEveryPool) {
  // Determinism: partial sums per chunk, added in chunk order, give the same bits on every pool,
  // because the chunks do not depend on the number of threads or on which finishes first.
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::normal((1 << 20) + 77, rng);
  const std::size_t grain = 4096, chunks = (x.size() + grain - 1) / grain;
  auto sum = [&](ThreadPool& pool) {
    std::vector<float> partial(chunks);
    lab03::parallel_for(pool, {0, x.size()}, grain, [&](Range r) {
      float s = 0;
      for (std::size_t i = r.begin; i < r.end; ++i) s += x(i);
      partial[r.begin / grain] = s;
    });
    float total = 0;
    for (float p : partial) total += p;
    return std::bit_cast<std::uint32_t>(total);
  };
  std::uint32_t first = 0;
  for (unsigned n : kPoolSizes) {
    Watchdog watchdog("a parallel sum on " + pool_of(n));
    WatchedPool pool(n);
    for (int repeat = 0; repeat < 3; ++repeat) {
      const std::uint32_t bits = sum(pool);
      if (n == kPoolSizes[0] && repeat == 0) first = bits;
      EXPECT_EQ(bits, first)
          << "the sum changed with " << pool_of(n) << " (run " << repeat
          << "): were the chunks the same, and each partial stored at its chunk's index?";
    }
  }
}

TEST(ParallelFor, NestedCallsDoNotDeadlock) {
  // A chunk that calls parallel_for on its own pool. Were it to wait there for the pool's workers,
  // all of which may be doing the same, nobody would be left to run the inner chunks.
  for (unsigned n : {1u, 2u}) {
    Watchdog watchdog(
        "parallel_for called from inside a chunk of parallel_for on the same pool (" + pool_of(n) +
        "); a nested call must run its chunks in the calling thread, see is_worker_thread()");
    WatchedPool pool(n);
    // A nested call knows it is nested by is_worker_thread(): true inside every task the pool runs.
    std::atomic<bool> inside_a_task{true};
    pool.submit([&] { inside_a_task = pool.is_worker_thread(); }).get();
    if (!inside_a_task) {
      ADD_FAILURE() << "is_worker_thread() returned false inside a task that one of the pool's "
                       "workers ran ("
                    << pool_of(n)
                    << "), so a nested parallel_for cannot tell "
                       "it is nested, and waits for workers that are all busy waiting too. Each "
                       "worker must record its pool before it runs any task: current_ = this, "
                       "first thing in work() (step 1). Edit labs/03_thread_pool/thread_pool.cpp.";
      return;
    }
    Counts counts(8 * 100);
    lab03::parallel_for(pool, {0, 8}, 1, [&](Range outer) {
      lab03::parallel_for(pool, {0, 100}, 7, [&](Range inner) {
        for (std::size_t i = inner.begin; i < inner.end; ++i) counts.add(outer.begin * 100 + i);
      });
    });
    EXPECT_EQ(counts.not_once("inner index"), "") << "with " << pool_of(n);
  }
}

TEST(ParallelFor, ConcurrentCallersShareOnePool) {
  // Four threads use one pool at once: each call must wait for its own chunks, not for the others'.
  Watchdog watchdog("four threads calling parallel_for on one pool at the same time");
  WatchedPool pool(2);
  constexpr int kCallers = 4, kCalls = 20;
  constexpr std::size_t kN = 1000;
  std::vector<std::string> problems(kCallers);
  {
    std::vector<std::jthread> callers;
    for (int c = 0; c < kCallers; ++c) {
      callers.emplace_back([&, c] {
        for (int call = 0; call < kCalls && problems[c].empty(); ++call) {
          Counts counts(kN);
          lab03::parallel_for(pool, {0, kN}, 7, [&](Range r) {
            for (std::size_t i = r.begin; i < r.end; ++i) counts.add(i);
          });
          problems[c] = counts.not_once("index");
        }
      });
    }
  }
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(problems[c], "") << "caller " << c;
}

// --- Step 3: parallel_relu -----------------------------------------------------------------------

// The same call once more, into the poisoned output, for a check that fails: an output that
// changes between two runs on the same input is a race, and the check says so.
std::function<void()> again(ThreadPool& pool, std::span<const float> x, GuardedBuffer<float>& y) {
  return [&pool, x, &y] {
    y.poison();
    lab03::parallel_relu(pool, x, y.span());
  };
}

TEST(ParallelRelu, MatchesOracleAtManySizes) {
  auto rng = workbook::testing::rng();
  // Sizes with every tail of a SIMD width, sizes smaller than any chunk, and large ones: several
  // chunks, and one past the streaming-store threshold (12 MiB).
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 40; ++n) sizes.push_back(n);
  for (std::size_t n : {1000, 65536 + 3, (1 << 20) + 13, (3 << 20) + 5}) sizes.push_back(n);
  // Every case is checked before any is reported (Cases): the smallest sizes, where a whole chunk
  // is the whole output, look alike whatever the mistake; a large one shows its pattern.
  Cases cases(lab03::oracle::where("parallel_relu"));
  for (unsigned threads : kPoolSizes) {
    WatchedPool pool(threads);
    for (std::size_t n : sizes) {
      cases.next("n = " + std::to_string(n) + ", " + pool_of(threads));
      Watchdog watchdog("parallel_relu of " + std::to_string(n) + " floats on " + pool_of(threads));
      const workbook::Vector x = workbook::normal(n, rng);
      GuardedBuffer<float> y(n);
      try {
        lab03::parallel_relu(pool, as_span(x), y.span());
      } catch (const workbook::NotImplemented&) {
        throw;  // a step not written yet: GoogleTest says which
      } catch (const std::exception& e) {
        cases.check(threw("parallel_relu", e, n, threads));
        continue;
      }
      cases.check(
          lab03::oracle::check_relu(as_span(x), y, "parallel_relu", again(pool, as_span(x), y)));
    }
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(ParallelRelu, UnalignedAndInPlace) {
  Watchdog watchdog("parallel_relu on unaligned and in-place buffers");
  auto rng = workbook::testing::rng();
  WatchedPool pool(3);
  const std::size_t n = (1 << 18) + 7;
  const workbook::Vector storage = workbook::normal(n + 16, rng);
  Cases cases(lab03::oracle::where("parallel_relu"));
  for (std::size_t shift : {1, 5, 15}) {
    cases.next("n = " + std::to_string(n) + ", input starts " + std::to_string(shift) +
               " floats past a 64-byte boundary, output " + std::to_string(16 - shift));
    const auto x = as_span(storage).subspan(shift, n);
    GuardedBuffer<float> y(n, /*misalign=*/16 - shift);
    lab03::parallel_relu(pool, x, y.span());
    cases.check(lab03::oracle::check_relu(x, y, "parallel_relu", again(pool, x, y)));
  }
  cases.next("n = " + std::to_string(n) + ", in place (y is x)");
  GuardedBuffer<float> inout(n);
  const auto in_place = [&] {
    std::copy(storage.begin(), storage.begin() + n, inout.data());
    lab03::parallel_relu(pool, inout.span(), inout.span());
  };
  in_place();
  cases.check(
      lab03::oracle::check_relu(as_span(storage).first(n), inout, "parallel_relu", in_place));
  EXPECT_ALL_CORRECT(cases);
}

TEST(ParallelRelu, SpecialValues) {
  // NaN stays NaN, -inf gives 0, denormals and huge values pass through.
  Watchdog watchdog("parallel_relu on special values");
  auto rng = workbook::testing::rng();
  WatchedPool pool(2);
  const workbook::Vector x = workbook::adversarial(300001, rng);
  GuardedBuffer<float> y(x.size());
  lab03::parallel_relu(pool, as_span(x), y.span());
  EXPECT_CORRECT(
      lab03::oracle::check_relu(as_span(x), y, "parallel_relu", again(pool, as_span(x), y)));
}

TEST(ParallelRelu, ThreadsWriteContiguousRanges) {
  // While parallel_relu runs, this thread looks at y again and again: the elements written so far
  // show how the work is split. Contiguous chunks leave one front per thread, each inside one
  // 64-byte line; threads that interleave (thread t taking i = t, t + T, ...) leave many lines
  // half written, because they write the same lines at once. The look races with the writes on
  // purpose, so it is left out under ThreadSanitizer.
  if (kUnderTsan) GTEST_SKIP() << "looks at y while it is written: not under ThreadSanitizer";
  Watchdog watchdog("parallel_relu of 4 Mi floats on a pool of 8 threads, watched while it runs");
  auto rng = workbook::testing::rng();
  const std::size_t n = std::size_t{1} << 22, kLine = 16;
  const workbook::Vector x = workbook::normal(n, rng);
  GuardedBuffer<float> y(n);
  WatchedPool pool(8);
  std::size_t most = 0, looks = 0;
  for (int call = 0; call < 10 && most < 64; ++call) {
    y.poison();
    std::atomic<bool> running{true};
    std::jthread call_thread([&] {
      lab03::parallel_relu(pool, as_span(x), y.span());
      running = false;
    });
    while (running) {
      std::size_t half_written = 0;
      for (std::size_t line = 0; line + kLine <= n; line += kLine) {
        std::size_t written = 0;
        for (std::size_t i = line; i < line + kLine; ++i) written += !y.is_poison(i);
        half_written += written > 0 && written < kLine;
      }
      if (running) most = std::max(most, half_written), ++looks;
    }
  }
  ASSERT_CORRECT(lab03::oracle::check_relu(as_span(x), y, "parallel_relu"));
  EXPECT_LT(most, 64u)
      << "while parallel_relu ran on " << pool_of(8) << ", up to " << most
      << " of y's 64-byte cache lines were half written at the same moment (" << looks
      << " looks): several threads write into the same lines, their elements interleaved (thread "
         "t taking i = t, t + T, ...?). Each line then moves from core to core at every write "
         "(false sharing), and no thread has a contiguous range of its own for relu_chunk: it "
         "runs slower than on one thread. Give each task one contiguous range, a chunk of "
         "parallel_for, and run "
         "relu_chunk on it.";
}

TEST(ParallelRelu, RejectsMismatchedOrOverlappingBuffers) {
  Watchdog watchdog("parallel_relu on mismatched and overlapping buffers");
  WatchedPool pool(2);
  std::vector<float> x(10), y(9), z(11);
  EXPECT_THROW(lab03::parallel_relu(pool, x, y), std::invalid_argument);
  EXPECT_THROW(
      lab03::parallel_relu(pool, std::span<const float>(z).first(10), std::span<float>(z).last(10)),
      std::invalid_argument);
}

// --- Step 4: process_batch -----------------------------------------------------------------------

// A batch whose tensor i starts with the value i, so that an operation can tell which one it got.
std::vector<Tensor> numbered_batch(std::size_t count, std::size_t min_size, std::size_t max_size,
                                   workbook::Rng& rng) {
  std::vector<Tensor> batch =
      lab03::ops::make_batch(count, std::max<std::size_t>(min_size, 1), max_size, rng);
  for (std::size_t i = 0; i < count; ++i) batch[i](0) = static_cast<float>(i);
  return batch;
}
std::size_t number_of(const Tensor& t) {
  return static_cast<std::size_t>(t(0));
}

TEST(ProcessBatch, SameResultsAsSerialOnEveryPool) {
  auto rng = workbook::testing::rng();
  const std::vector<Tensor> batch = lab03::ops::make_batch(40, 0, 3000, rng);
  // Each tensor also takes a different time, so that the tasks finish in another order than they
  // started: the results must still come back in input order.
  const lab03::TensorOp op = [](const Tensor& t) {
    std::this_thread::sleep_for(std::chrono::microseconds(t.size() % 7 * 200));
    return lab03::ops::polynomial(t);
  };
  const std::vector<Tensor> expected = lab03::oracle::serial(batch, op);
  // Calls of op still running when process_batch returns: it did not wait for all its tasks.
  // (Static: such a call outlives the test's frame.)
  static std::atomic<int> running{0};
  const lab03::TensorOp counted = [&op](const Tensor& t) {
    ++running;
    struct Finished {
      ~Finished() { --running; }
    } finished;
    return op(t);
  };
  Cases cases(lab03::oracle::where("process_batch"), "pool");
  for (unsigned n : kPoolSizes) {
    cases.next("40 tensors on " + pool_of(n));
    Watchdog watchdog("process_batch of 40 tensors on " + pool_of(n));
    std::vector<Tensor> results;  // before the pool: tasks left running end with the pool
    WatchedPool pool(n);
    results = lab03::process_batch(pool, batch, counted);
    if (const int still = running.load(); still > 0) {
      CheckResult r;
      r.ok = false;
      r.specificity = Specificity::pattern;
      r.summary = "process_batch returned while " + std::to_string(still) + " of its calls of op " +
                  "were still running";
      r.diagnosis =
          "it must wait for every task it submitted (every future: wait(), then get() "
          "each in order) before it returns: a task still running writes into results "
          "after the caller has them, and uses op and the batch, which may be gone";
      r.edit = "edit labs/03_thread_pool/thread_pool.cpp: process_batch (and parallel_for)";
      cases.check(r);
      continue;
    }
    cases.check(lab03::oracle::check_batch(results, expected));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(ProcessBatch, EachTensorExactlyOnce) {
  Watchdog watchdog("process_batch of 300 tensors");
  auto rng = workbook::testing::rng();
  const std::vector<Tensor> batch = numbered_batch(300, 1, 100, rng);
  WatchedPool pool(3);
  Counts calls(batch.size());
  const auto twice = [](const Tensor& t) { return Tensor(2.0f * t); };
  const std::vector<Tensor> results = lab03::process_batch(pool, batch, [&](const Tensor& t) {
    calls.add(number_of(t));
    return twice(t);
  });
  EXPECT_EQ(calls.not_once("op for tensor"), "");
  EXPECT_CORRECT(lab03::oracle::check_batch(results, lab03::oracle::serial(batch, twice)));
}

TEST(ProcessBatch, EmptyBatchGivesNoResults) {
  Watchdog watchdog("process_batch of an empty batch");
  WatchedPool pool(2);
  std::atomic<int> calls{0};
  const std::vector<Tensor> results = lab03::process_batch(pool, {}, [&](const Tensor& t) {
    ++calls;
    return t;
  });
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(calls.load(), 0) << "op was called for a batch without tensors";
}

TEST(ProcessBatch, BatchSmallerThanThePool) {
  Watchdog watchdog("process_batch of 3 tensors on a pool of 8 threads");
  auto rng = workbook::testing::rng();
  const std::vector<Tensor> batch = lab03::ops::make_batch(3, 1, 5000, rng);
  WatchedPool pool(8);
  const std::vector<Tensor> results = lab03::process_batch(pool, batch, lab03::ops::polynomial);
  EXPECT_CORRECT(
      lab03::oracle::check_batch(results, lab03::oracle::serial(batch, lab03::ops::polynomial)));
}

TEST(ProcessBatch, RethrowsTheLowestFailingTensorAfterProcessingAll) {
  Watchdog watchdog("process_batch with two tensors whose op throws", Watchdog::Throws::yes);
  auto rng = workbook::testing::rng();
  const std::vector<Tensor> batch = numbered_batch(20, 1, 100, rng);
  Counts calls(batch.size());
  const std::exception_ptr error = thrown_by(3, [&](ThreadPool& pool) {
    lab03::process_batch(pool, batch, [&](const Tensor& t) {
      const std::size_t i = number_of(t);
      calls.add(i);
      if (i == 4) {
        std::this_thread::sleep_for(20ms);  // fails after tensor 9 does
        throw std::runtime_error("tensor 4");
      }
      if (i == 9) throw std::runtime_error("tensor 9");
      return t;
    });
  });
  ASSERT_TRUE(error) << "process_batch returned normally although op threw for tensors 4 and 9";
  EXPECT_EQ(message_of(error), "tensor 4")
      << "rethrow the exception of the lowest-numbered tensor whose op threw";
  // Tensors never processed, each right after a failing one (4, 9) or after another never
  // processed: a throw ended the loop over the tensors of its chunk.
  const std::vector<std::size_t> wrong = calls.not_once();
  bool after_a_throw = !wrong.empty() && !calls.some_more_than_once();
  for (std::size_t k = 0; k < wrong.size() && after_a_throw; ++k)
    after_a_throw = wrong[k] == 5 || wrong[k] == 10 || (k > 0 && wrong[k - 1] == wrong[k] - 1);
  std::string listed;
  for (std::size_t k = 0; k < wrong.size(); ++k)
    listed += (k == 0 ? "" : k + 1 == wrong.size() ? " and " : ", ") + std::to_string(wrong[k]);
  if (after_a_throw)
    ADD_FAILURE() << "op never ran for tensor" << (wrong.size() > 1 ? "s " : " ") << listed
                  << ", each right after tensor 4 or 9, whose op threw, or after another "
                     "tensor that never ran: the exception ended the loop over the tensors of its "
                     "chunk, so the rest of that chunk was skipped. Every tensor must be processed "
                     "even when op throws for some: catch the exception of each tensor where op "
                     "runs (or give each tensor a chunk of its own, whose future holds it), go on "
                     "with the next, and rethrow the lowest-numbered one's at the end.";
  else
    EXPECT_EQ(calls.not_once("op for tensor"), "")
        << "every tensor must be processed, even when op throws for some";
}

TEST(ProcessBatch, OpMayUseThePool) {
  // The operation itself runs parallel_relu on the same pool: a nested parallel_for.
  Watchdog watchdog("process_batch whose op calls parallel_relu on the same pool");
  auto rng = workbook::testing::rng();
  const std::vector<Tensor> batch = lab03::ops::make_batch(6, 100000, 300000, rng);
  WatchedPool pool(2);
  const lab03::TensorOp relu_on_pool = [&](const Tensor& t) {
    Tensor y(Tensor::shape_type{t.size()});
    lab03::parallel_relu(pool, as_span(t), as_span(y));
    return y;
  };
  const lab03::TensorOp relu_here = [](const Tensor& t) {
    Tensor y(Tensor::shape_type{t.size()});
    for (std::size_t i = 0; i < t.size(); ++i) y(i) = static_cast<float>(lab03::oracle::relu(t(i)));
    return y;
  };
  EXPECT_CORRECT(lab03::oracle::check_batch(lab03::process_batch(pool, batch, relu_on_pool),
                                            lab03::oracle::serial(batch, relu_here)));
}

TEST(ProcessBatch, ManySmallTensors) {
  const std::size_t count = kUnderTsan ? 2000 : 20000;
  Watchdog watchdog("process_batch of " + std::to_string(count) + " small tensors");
  auto rng = workbook::testing::rng();
  const std::vector<Tensor> batch = lab03::ops::make_batch(count, 0, 16, rng);
  WatchedPool pool(2);
  const std::vector<Tensor> results = lab03::process_batch(pool, batch, lab03::ops::polynomial);
  EXPECT_CORRECT(
      lab03::oracle::check_batch(results, lab03::oracle::serial(batch, lab03::ops::polynomial)));
}

}  // namespace
