// Mistake: parallel_for counts its chunks from 0 over range.size() indices, as if every range
// started at 0 (parallel_relu's and process_batch's do, which hides it).
// Checked by: ParallelFor.EveryIndexInExactlyOneChunk
// Expect: your chunks match chunks counted from 0 instead of from range.begin
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t b = 0; b < range.size(); b += grain) {
    const Range chunk{b, std::min(b + grain, range.size())};
    if (pool.is_worker_thread())
      body(chunk);
    else
      done.push_back(pool.submit([&body, chunk] { body(chunk); }));
  }
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
