// Mistake: parallel_for always submits its chunks and waits for them, even when it is called from
// a task of the same pool: the worker that calls it then waits for chunks that only the pool's
// workers can run, and with every worker doing the same, none is left (a deadlock).
// Checked by: ParallelFor.NestedCallsDoNotDeadlock
// Expect: so no worker is left to run what they wait for
// Expect: run the chunks in the calling thread
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t b = range.begin; b < range.end; b += grain) {
    const Range chunk{b, std::min(b + grain, range.end)};
    done.push_back(pool.submit([&body, chunk] { body(chunk); }));
  }
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
