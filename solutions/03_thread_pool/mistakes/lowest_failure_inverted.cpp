// Mistake: each task runs every T-th chunk and records its first failure; the search for the
// lowest failing chunk compares with > and picks the highest record, a task's "no failure" as soon
// as one task had none: the exceptions are lost on every pool of more than one thread.
// Checked by: ParallelFor.RethrowsTheLowestFailingChunkAfterRunningAll
// Expect: a comparison that picks the lowest failing chunk inverted
#include "thread_pool.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  struct Failure {
    std::size_t chunk = SIZE_MAX;  // none
    std::exception_ptr error;
  };
  const std::size_t chunks = (range.size() + grain - 1) / grain;
  const std::size_t tasks = std::max<std::size_t>(1, std::min<std::size_t>(chunks, pool.size()));
  std::vector<Failure> failures(tasks);
  const auto run = [&](std::size_t t) {
    for (std::size_t c = t; c < chunks; c += tasks) {
      const std::size_t b = range.begin + c * grain;
      try {
        body({b, std::min(b + grain, range.end)});
      } catch (...) {
        if (c < failures[t].chunk) failures[t] = {c, std::current_exception()};
      }
    }
  };
  if (pool.is_worker_thread()) {
    for (std::size_t t = 0; t < tasks; ++t) run(t);
  } else {
    std::vector<std::future<void>> done;
    for (std::size_t t = 0; t < tasks; ++t) done.push_back(pool.submit([&run, t] { run(t); }));
    for (std::future<void>& f : done) f.wait();
  }
  const auto lowest = std::min_element(
      failures.begin(), failures.end(),
      [](const Failure& a, const Failure& b) { return a.chunk > b.chunk; });  // the mistake: <
  if (lowest != failures.end() && lowest->error) std::rethrow_exception(lowest->error);
}

}  // namespace lab03
