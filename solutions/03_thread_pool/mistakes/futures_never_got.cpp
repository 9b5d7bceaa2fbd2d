// Mistake: parallel_for waits for every chunk's future but never calls get(): wait() does not
// rethrow, so an exception thrown in a chunk is lost.
// Checked by: ParallelFor.RethrowsTheLowestFailingChunkAfterRunningAll
// Expect: wait() alone does not rethrow
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t b = range.begin; b < range.end; b += grain) {
    const Range chunk{b, std::min(b + grain, range.end)};
    if (pool.is_worker_thread())
      body(chunk);
    else
      done.push_back(pool.submit([&body, chunk] { body(chunk); }));
  }
  for (std::future<void>& f : done) f.wait();
}

}  // namespace lab03
