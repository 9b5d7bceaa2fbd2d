#pragma once
// Lab 03's perf advice, from what the threads of a call were seen doing: threads started during the
// call (threads.hpp), chunks of parallel_for that never ran two at a time (or never left the
// calling thread), or chunks that did and still made the call slower than on one thread. Each hint
// states what was measured, so that it never names a cause the code does not have; perf_cases.cpp
// gathers the evidence, the tests of solutions/03 check the advice against evidence made up for
// each case.
#include "thread_pool.hpp"
#include "threads.hpp"

#include <workbook/format.hpp>
#include <workbook/roofline.hpp>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lab03::evidence {

/// What one call of a parallel function showed, and the same call on a pool of one thread.
struct Call {
  unsigned workers = 0;             ///< the pool's size; 0: only the threads started are looked at
  std::size_t threads_started = 0;  ///< threads that appeared during the call
  unsigned at_once = 0;  ///< the most chunks of parallel_for seen running at once (chunks_at_once)
  bool all_on_caller = false;  ///< every one of those chunks ran on the thread that called
  double seconds = 0;          ///< the call's time
  double one_thread = 0;       ///< the same call's time on a pool of one worker
  /// relu_chunk over the whole output on one thread, with ordinary and with streaming stores
  /// (parallel_relu only; 0: not measured).
  double ordinary_one = 0, streaming_one = 0;
};

/// What the advice is about: "parallel_relu" and what bounds it ("the all-core copy roof").
struct About {
  std::string function;
  std::string roof;
  std::string own_speed;  ///< what to look at once every thread runs: the case's own advice
};

/// How parallel_for on `pool` ran 4 chunks per worker that each sleep 2 ms.
struct Chunks {
  unsigned at_once = 0;  ///< the most in flight at the same time: 1 when they ran one at a time
  bool all_on_caller = false;  ///< every chunk ran on the thread that called parallel_for
};

/// Runs those chunks and says how they ran: up to the pool's size (and the caller) at once when
/// they run in parallel. Sleeping chunks overlap however loaded the machine is.
inline Chunks chunks_at_once(ThreadPool& pool) {
  std::mutex mutex;
  unsigned now = 0;
  Chunks seen{.all_on_caller = true};
  const std::thread::id caller = std::this_thread::get_id();
  parallel_for(pool, {0, 4 * std::size_t{pool.size()}}, 1, [&](Range) {
    {
      std::lock_guard lock(mutex);
      seen.at_once = std::max(seen.at_once, ++now);
      seen.all_on_caller = seen.all_on_caller && std::this_thread::get_id() == caller;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard lock(mutex);
    --now;
  });
  return seen;
}

/// The hints for `call` (see workbook::perf::Case::hint): when the evidence shows a cause, one hint
/// that applies at any speed and names it; otherwise the case's advice on the threads' own speed.
inline std::vector<workbook::Hint> hints(const Call& call, const About& about) {
  const double always = 1e9;  // any fraction of the roof (finite: the hints travel as JSON)
  const std::string speedup =
      call.seconds > 0 ? workbook::format_fixed(call.one_thread / call.seconds, 2) + "x" : "?";
  if (call.threads_started > 0)
    return {{always,
             "During one call, " + std::to_string(call.threads_started) +
                 (call.threads_started == 1 ? " thread was" : " threads were") +
                 " started (seen in /proc/self/task): your " + about.function +
                 " starts threads of its own on every call (std::thread, std::jthread or "
                 "std::async) instead of handing tasks to the pool's workers, which are started "
                 "once. Each thread costs tens of microseconds to start and join; submit to the "
                 "pool."}};
  if (call.workers >= 2 && call.at_once == 1 && call.all_on_caller)
    return {{always,
             "Your parallel_for ran every chunk on the thread that called it, one after the "
             "other, and none on the pool's " +
                 std::to_string(call.workers) + " workers (" + std::to_string(4 * call.workers) +
                 " chunks that each sleep 2 ms): it took the path meant for a call from inside "
                 "one of the pool's own tasks. Look at the test that chooses it: run the chunks "
                 "inline only when pool.is_worker_thread() is true (a nested call); a call from "
                 "outside the pool submits them."}};
  if (call.workers >= 2 && call.at_once == 1)
    return {
        {always, "Your parallel_for never ran two chunks at once: of " +
                     std::to_string(4 * call.workers) + " chunks that each sleep 2 ms, on " +
                     std::to_string(call.workers) +
                     " workers, each started only once the one before had finished. Submit every "
                     "task before waiting for any: a future "
                     "waited for right after its submit (submit(...).get() in the loop) serialises "
                     "them, and so does a worker that runs its task while holding the pool's "
                     "mutex."}};
  // On one thread far slower than the ReLU itself over the whole output: the time goes elsewhere.
  if (call.one_thread > 0 && call.ordinary_one > 0 && call.one_thread > 3 * call.ordinary_one)
    return {{0.85, "On one thread your " + about.function + " took " +
                       workbook::format_seconds(call.one_thread) + ", " +
                       workbook::format_fixed(call.one_thread / call.ordinary_one, 0) +
                       " times relu_chunk over the whole output (" +
                       workbook::format_seconds(call.ordinary_one) +
                       "): the time goes to something other than the ReLU. Most often chunks far "
                       "too small for what each one costs (a task, a lock, a wake-up): a few "
                       "chunks of at least 64 Ki floats per worker; or work done again for every "
                       "chunk."}};
  // On one thread as long as ordinary stores take (neither faster, which streaming would be, nor
  // much slower, which something else would make it), where streaming ones are clearly faster.
  if (call.one_thread > 0 && call.ordinary_one > 0 && call.streaming_one > 0 &&
      call.streaming_one < 0.85 * call.ordinary_one && call.one_thread > 0.95 * call.ordinary_one &&
      call.one_thread < 1.2 * call.ordinary_one)
    return {{0.85, "On one thread your " + about.function + " took " +
                       workbook::format_seconds(call.one_thread) +
                       ", as long as relu_chunk over the whole output with ordinary stores (" +
                       workbook::format_seconds(call.ordinary_one) +
                       "), while with streaming stores it takes " +
                       workbook::format_seconds(call.streaming_one) +
                       ": your chunks store ordinarily. Choose the stores once, for the whole "
                       "output (stores_for(y.size_bytes())), and pass that choice to every chunk: "
                       "a choice made per chunk sees only the chunk's size, below the threshold."}};
  if (call.workers >= 2 && call.at_once >= 2 && call.one_thread > 0 &&
      call.seconds > call.one_thread / 0.8)
    return {{always,
             "Your parallel_for runs up to " + std::to_string(call.at_once) +
                 " chunks at once, yet this call took longer than on one thread (speedup " +
                 speedup +
                 "): the threads slow each other down. The usual cause is threads writing into "
                 "the same cache lines (false sharing: elements dealt out as i = t, t + T, ... "
                 "instead of one contiguous range per task, or per-thread results side by side), "
                 "or one lock or shared counter taken per element."}};
  return {{0.85, "Below " + about.roof + " while the threads ran together (speedup " + speedup +
                     " over one thread): " + about.own_speed}};
}

}  // namespace lab03::evidence
