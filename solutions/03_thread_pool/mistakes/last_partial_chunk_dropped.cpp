// Mistake: parallel_for makes range.size() / grain chunks, rounded down: the last, shorter chunk
// is never run.
// Checked by: ParallelFor.EveryIndexInExactlyOneChunk
// Expect: your chunks match whole chunks only: the last, shorter chunk is left out
#include "thread_pool.hpp"

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t c = 0; c < range.size() / grain; ++c) {
    const Range chunk{range.begin + c * grain, range.begin + (c + 1) * grain};
    if (pool.is_worker_thread())
      body(chunk);
    else
      done.push_back(pool.submit([&body, chunk] { body(chunk); }));
  }
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
