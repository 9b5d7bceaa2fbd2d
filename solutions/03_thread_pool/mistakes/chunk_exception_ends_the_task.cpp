// Mistake: each task runs a contiguous range of chunks in a loop, with no try around a chunk: the
// first chunk that throws ends its task, and the task's later chunks never run.
// Checked by: ParallelFor.RethrowsTheLowestFailingChunkAfterRunningAll
// Expect: never started, even after the pool was destroyed
// Expect: catch the exception of each chunk where it runs
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  if (grain == 0) throw std::invalid_argument("parallel_for: grain must be at least 1");
  const std::size_t chunks = (range.size() + grain - 1) / grain;
  const std::size_t tasks = std::min<std::size_t>(chunks, pool.size());
  auto chunk = [&](std::size_t k) {
    const std::size_t b = range.begin + k * grain;
    return Range{b, std::min(b + grain, range.end)};
  };
  std::vector<std::future<void>> done;
  for (std::size_t t = 0; t < tasks; ++t) {
    const std::size_t first = t * chunks / tasks, last = (t + 1) * chunks / tasks;
    done.push_back(pool.submit([&body, &chunk, first, last] {
      for (std::size_t k = first; k < last; ++k) body(chunk(k));  // a throw ends the loop
    }));
  }
  for (auto& f : done) f.wait();
  for (auto& f : done) f.get();
}

}  // namespace lab03
