// Mistake: every chunk of parallel_for is grain long, the last one too: it runs past range.end
// when grain does not divide the range.
// Checked by: ParallelFor.EveryIndexInExactlyOneChunk
// Expect: your chunks match chunks whose last one runs past range.end
#include "thread_pool.hpp"

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t b = range.begin; b < range.end; b += grain) {
    const Range chunk{b, b + grain};
    if (pool.is_worker_thread())
      body(chunk);
    else
      done.push_back(pool.submit([&body, chunk] { body(chunk); }));
  }
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
