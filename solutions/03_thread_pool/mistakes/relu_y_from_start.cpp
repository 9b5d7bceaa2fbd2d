// Mistake: each chunk writes y from its start (the chunk's offset applied to x only).
// Checked by: ParallelRelu.MatchesOracleAtManySizes
// Expect: your output matches every chunk of 4096 written to the start of y
#include "relu_chunk.hpp"
#include "thread_pool.hpp"

namespace lab03 {

void parallel_relu(ThreadPool& pool, std::span<const float> x, std::span<float> y) {
  const Stores stores = stores_for(y.size_bytes());
  parallel_for(pool, {0, x.size()}, 4096, [&](Range r) {
    relu_chunk(x.subspan(r.begin, r.size()), y.first(r.size()), stores);
  });
}

}  // namespace lab03
