// Mistake: parallel_for starts threads of its own on every call (one per worker of the pool) and
// joins them, instead of handing tasks to the pool's workers. The results are right; each call
// pays for starting and joining the threads.
// Checked by: ParallelFor.ChunksRunOnThePoolsWorkers
// Expect: threads that did not exist before the call
#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::atomic<std::size_t> next{range.begin};
  std::vector<std::exception_ptr> errors(pool.size());
  {
    std::vector<std::jthread> threads;
    for (unsigned t = 0; t < pool.size(); ++t)
      threads.emplace_back([&, t] {
        for (std::size_t b; (b = next.fetch_add(grain)) < range.end;) {
          try {
            body({b, std::min(b + grain, range.end)});
          } catch (...) {
            errors[t] = std::current_exception();
          }
        }
      });
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace lab03
