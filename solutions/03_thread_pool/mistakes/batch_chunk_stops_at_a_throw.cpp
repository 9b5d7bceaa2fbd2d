// Mistake: process_batch cuts the batch into one chunk per thread and loops over each chunk's
// tensors: a tensor whose op throws ends its chunk, and the tensors after it are never processed.
// Checked by: ProcessBatch.RethrowsTheLowestFailingTensorAfterProcessingAll
// Expect: each right after tensor 4 or 9, whose op threw
// Expect: catch the exception of each tensor where op runs
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

std::vector<Tensor> process_batch(ThreadPool& pool, std::span<const Tensor> batch,
                                  const TensorOp& op) {
  if (!op) throw std::invalid_argument("process_batch: the operation is an empty std::function");
  std::vector<Tensor> results(batch.size());
  const std::size_t grain = std::max<std::size_t>(1, batch.size() / pool.size());
  parallel_for(pool, {0, batch.size()}, grain, [&](Range r) {
    for (std::size_t i = r.begin; i < r.end; ++i) results[i] = op(batch[i]);
  });
  return results;
}

}  // namespace lab03
