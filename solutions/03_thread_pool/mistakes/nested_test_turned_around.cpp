// Mistake: the test for a nested call is turned around (`!pool.is_worker_thread()`): every call
// from outside the pool runs its chunks inline, one after the other, on the calling thread. The
// results are right; nothing runs in parallel.
// Checked by: ParallelFor.ChunksRunOnThePoolsWorkers
// Expect: ran every one on the thread that called it, none on the pool's 2 workers
// Expect: only when pool.is_worker_thread() is true
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t b = range.begin; b < range.end; b += grain) {
    const Range chunk{b, std::min(b + grain, range.end)};
    if (!pool.is_worker_thread())
      body(chunk);
    else
      done.push_back(pool.submit([&body, chunk] { body(chunk); }));
  }
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
