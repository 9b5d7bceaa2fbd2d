// Mistake: parallel_for counts its chunks as (range.size() + grain) / grain, a ceiling only when
// grain does not divide the size: otherwise one chunk more, [range.end, range.end).
// Checked by: ParallelFor.EveryIndexInExactlyOneChunk
// Expect: your chunks match one chunk more when grain divides the range
// Expect: (range.size() + grain - 1) / grain
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t c = 0; c < (range.size() + grain) / grain; ++c) {
    const Range chunk{range.begin + c * grain, std::min(range.begin + (c + 1) * grain, range.end)};
    if (pool.is_worker_thread())
      body(chunk);
    else
      done.push_back(pool.submit([&body, chunk] { body(chunk); }));
  }
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
