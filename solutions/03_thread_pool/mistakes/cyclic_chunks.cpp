// Mistake: parallel_relu deals the elements out like cards: task t of T takes i = t, t + T, t + 2T,
// ... The output is right, but the tasks write into the same cache lines at once (false sharing)
// and no task has a contiguous range for relu_chunk's SIMD: slower than one thread.
// Checked by: ParallelRelu.ThreadsWriteContiguousRanges
// Expect: half written at the same moment
// Expect: false sharing
#include "thread_pool.hpp"

#include <cmath>

namespace lab03 {

void parallel_relu(ThreadPool& pool, std::span<const float> x, std::span<float> y) {
  const std::size_t tasks = pool.size();
  parallel_for(pool, {0, tasks}, 1, [&](Range r) {
    for (std::size_t i = r.begin; i < x.size(); i += tasks)
      y[i] = std::isnan(x[i]) || x[i] > 0 ? x[i] : 0.0f;
  });
}

}  // namespace lab03
