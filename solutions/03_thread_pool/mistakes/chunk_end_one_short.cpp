// Mistake: parallel_for treats a chunk's end as inclusive and subtracts 1: the last element of
// every chunk is never run.
// Checked by: ParallelRelu.UnalignedAndInPlace
// Expect: your output matches chunks of 4096 whose last element is never written
#include "relu_chunk.hpp"
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t b = range.begin; b < range.end; b += grain) {
    const std::size_t last = std::min(b + grain, range.end) - 1;
    if (pool.is_worker_thread())
      body({b, last});
    else
      done.push_back(pool.submit([&body, b, last] { body({b, last}); }));
  }
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

void parallel_relu(ThreadPool& pool, std::span<const float> x, std::span<float> y) {
  const Stores stores = stores_for(y.size_bytes());
  parallel_for(pool, {0, x.size()}, 4096, [&](Range r) {
    relu_chunk(x.subspan(r.begin, r.size()), y.subspan(r.begin, r.size()), stores);
  });
}

}  // namespace lab03
