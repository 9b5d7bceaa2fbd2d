#pragma once
// Lab 03's perf advice, from what the threads of a call were seen doing (threads.hpp): a thread
// started per call, chunks that ran one at a time, or threads that all ran and still made the call
// slower than on one thread. Each hint states what was measured, so that it never names a cause
// the code does not have; perf_cases.cpp gathers the evidence, the tests of solutions/03 check the
// advice against evidence made up for each case.
#include "threads.hpp"

#include <workbook/format.hpp>
#include <workbook/roofline.hpp>

#include <string>
#include <vector>

namespace lab03::evidence {

/// What one call of a parallel function showed, and the same call on a pool of one thread.
struct Call {
  unsigned workers = 0;             ///< the pool's size; 0: only the threads started are looked at
  std::size_t threads_started = 0;  ///< threads that appeared during the call
  double runnable = 0;    ///< the mean number of the pool's workers and the caller running
  double seconds = 0;     ///< the call's time
  double one_thread = 0;  ///< the same call's time on a pool of one worker
};

/// What the advice is about: "parallel_relu" and what bounds it ("the all-core copy roof").
struct About {
  std::string function;
  std::string roof;
  std::string own_speed;  ///< what to look at once every thread runs: the case's own advice
};

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
  if (call.workers >= 2 && call.runnable < 1.5)
    return {{always,
             "During one call, on average " + workbook::format_fixed(call.runnable, 1) +
                 " of the " + std::to_string(call.workers) +
                 " workers and the caller were running at a time (seen in /proc/self/task): the "
                 "work ran about one task at a time (speedup " +
                 speedup +
                 " over one thread). Submit every task before waiting for any (a future waited "
                 "for right after its submit, submit(...).get() in the loop, serialises them), "
                 "and never run a task while holding the pool's mutex."}};
  if (call.workers >= 2 && call.runnable >= 0.75 * call.workers && call.one_thread > 0 &&
      call.seconds > call.one_thread / 0.8)
    return {{always,
             "During one call, " + workbook::format_fixed(call.runnable, 1) + " of the " +
                 std::to_string(call.workers) +
                 " threads were running at a time, yet the call took longer than on one thread "
                 "(speedup " +
                 speedup +
                 "): the threads slow each other down. The usual cause is threads writing into "
                 "the same cache lines (false sharing: elements dealt out as i = t, t + T, ... "
                 "instead of one contiguous range per task, or per-thread results side by side), "
                 "or one lock or shared counter taken per element."}};
  return {{0.85, "Below " + about.roof + " while the threads ran together (speedup " + speedup +
                     " over one thread): " + about.own_speed}};
}

}  // namespace lab03::evidence
