// Mistake: each chunk counts a latch down after its body; a chunk whose body throws skips its
// count_down(), so the caller's wait on the latch never ends.
// Checked by: ParallelFor.ReturnsOnlyAfterEveryChunkFinished
// Expect: every task has run, and in this case one of them throws
// Expect: the exception skipped it
#include "thread_pool.hpp"

#include <exception>
#include <latch>
#include <mutex>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  if (grain == 0) throw std::invalid_argument("parallel_for: grain must be at least 1");
  const std::size_t chunks = (range.size() + grain - 1) / grain;
  std::latch done(static_cast<std::ptrdiff_t>(chunks));
  std::mutex mutex;
  std::exception_ptr first;
  for (std::size_t k = 0; k < chunks; ++k) {
    const std::size_t b = range.begin + k * grain;
    pool.submit([&, b] {
      try {
        body(Range{b, std::min(b + grain, range.end)});
        done.count_down();  // after the body: skipped when it throws
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!first) first = std::current_exception();
      }
    });
  }
  done.wait();
  if (first) std::rethrow_exception(first);
}

}  // namespace lab03
