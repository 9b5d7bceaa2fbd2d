// Mistake: parallel_for waits only for the future of its last chunk, as if the chunks finished
// in order: it returns while earlier chunks still run, and their exceptions are lost.
// Checked by: ParallelFor.RethrowsTheLowestFailingChunkAfterRunningAll
// Expect: of its 100 chunks had finished: it must wait for every chunk's future
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
  if (!done.empty()) done.back().get();
}

}  // namespace lab03
