// Mistake: process_batch stores chunk [begin, end)'s results at results[0], results[1], ...
// instead of results[begin], ...: the chunks overwrite each other.
// Checked by: ProcessBatch.SameResultsAsSerialOnEveryPool
// Expect: your results match each chunk's results stored from results[0] (chunks of 4)
#include "thread_pool.hpp"

namespace lab03 {

std::vector<Tensor> process_batch(ThreadPool& pool, std::span<const Tensor> batch,
                                  const TensorOp& op) {
  std::vector<Tensor> results(batch.size());
  parallel_for(pool, {0, batch.size()}, 4, [&](Range r) {
    for (std::size_t i = 0; i < r.size(); ++i) results[i] = op(batch[r.begin + i]);
  });
  return results;
}

}  // namespace lab03
