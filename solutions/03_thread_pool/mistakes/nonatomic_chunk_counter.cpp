// Mistake: parallel_for's tasks claim chunks from a shared counter that is a plain std::size_t
// (next++), not a std::atomic: two tasks can read the same value, and a chunk then runs twice while
// another never runs; and the counter itself is a data race. Rare in a run of the functional tests,
// reported by ThreadSanitizer every time.
// Checked by: ParallelFor.ManyTinyChunks
// Expect: WARNING: ThreadSanitizer: data race
// Expect: nonatomic_chunk_counter.cpp
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  const std::size_t chunks = (range.size() + grain - 1) / grain;
  std::size_t next = 0;  // shared by every task: should be std::atomic<std::size_t>
  const auto run = [&] {
    for (std::size_t k; (k = next++) < chunks;)
      body({range.begin + k * grain, std::min(range.begin + (k + 1) * grain, range.end)});
  };
  if (pool.is_worker_thread()) return run();
  std::vector<std::future<void>> done;
  for (unsigned t = 0; t < pool.size(); ++t) done.push_back(pool.submit(run));
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
