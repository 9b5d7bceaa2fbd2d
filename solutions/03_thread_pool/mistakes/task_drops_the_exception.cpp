// Mistake: each chunk's task catches the chunk's exception and drops it, so that no future holds
// it: parallel_for returns normally although chunks threw.
// Checked by: ParallelFor.RethrowsTheLowestFailingChunkAfterRunningAll
// Expect: catches its exception and drops it
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t b = range.begin; b < range.end; b += grain) {
    const Range chunk{b, std::min(b + grain, range.end)};
    const auto task = [&body, chunk] {
      try {
        body(chunk);
      } catch (...) {
      }
    };
    if (pool.is_worker_thread())
      task();
    else
      done.push_back(pool.submit(task));
  }
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
