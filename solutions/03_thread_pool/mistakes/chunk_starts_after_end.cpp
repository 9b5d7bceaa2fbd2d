// Mistake: parallel_for starts the next chunk at end + 1, as if the end were inclusive: one
// element between each two chunks is never run.
// Checked by: ParallelRelu.UnalignedAndInPlace
// Expect: your output matches chunks of 4096 with one element skipped between each two
#include "relu_chunk.hpp"
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t b = range.begin; b < range.end;) {
    const std::size_t e = std::min(b + grain, range.end);
    if (pool.is_worker_thread())
      body({b, e});
    else
      done.push_back(pool.submit([&body, b, e] { body({b, e}); }));
    b = e + 1;
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
