// Mistake: process_batch uses chunks of 4 tensors but processes only each chunk's first.
// Checked by: ProcessBatch.SameResultsAsSerialOnEveryPool
// Expect: your results match only the first tensor of each chunk of 4 processed
#include "thread_pool.hpp"

namespace lab03 {

std::vector<Tensor> process_batch(ThreadPool& pool, std::span<const Tensor> batch,
                                  const TensorOp& op) {
  std::vector<Tensor> results(batch.size());
  parallel_for(pool, {0, batch.size()}, 4, [&](Range r) { results[r.begin] = op(batch[r.begin]); });
  return results;
}

}  // namespace lab03
