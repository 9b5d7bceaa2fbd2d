// Mistake: each chunk reads x from its start (the chunk's offset applied to y only).
// Checked by: ParallelRelu.UnalignedAndInPlace
// Expect: your output matches every chunk of 4096 computed from the start of x
#include "relu_chunk.hpp"
#include "thread_pool.hpp"

namespace lab03 {

void parallel_relu(ThreadPool& pool, std::span<const float> x, std::span<float> y) {
  const Stores stores = stores_for(y.size_bytes());
  parallel_for(pool, {0, x.size()}, 4096, [&](Range r) {
    relu_chunk(x.first(r.size()), y.subspan(r.begin, r.size()), stores);
  });
}

}  // namespace lab03
