// Mistake: parallel_for's check of its range uses <= where < is meant: an empty range (begin ==
// end, n = 0) is rejected as if it ended before it began, though it is valid and has nothing to
// run.
// Checked by: ParallelRelu.MatchesOracleAtManySizes
// Expect: an empty range (begin == end), has nothing to run and must be accepted
// Expect: (range.end < range.begin, not <=)
#include "thread_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  if (grain == 0) throw std::invalid_argument("parallel_for: grain must be at least 1");
  if (range.end <= range.begin)  // the mistake: <
    throw std::invalid_argument("parallel_for: the range ends before it begins");
  std::vector<std::future<void>> done;
  for (std::size_t b = range.begin; b < range.end; b += grain) {
    const Range chunk{b, std::min(b + grain, range.end)};
    if (pool.is_worker_thread())
      body(chunk);
    else
      done.push_back(pool.submit([&body, chunk] { body(chunk); }));
  }
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
