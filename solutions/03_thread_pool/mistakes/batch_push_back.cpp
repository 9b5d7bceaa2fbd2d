// Mistake: process_batch appends each result under a mutex as it is ready: completion order, not
// input order.
// Checked by: ProcessBatch.SameResultsAsSerialOnEveryPool
// Expect: the results are not in input order
#include "thread_pool.hpp"

#include <mutex>

namespace lab03 {

std::vector<Tensor> process_batch(ThreadPool& pool, std::span<const Tensor> batch,
                                  const TensorOp& op) {
  std::vector<Tensor> results;
  std::mutex mutex;
  parallel_for(pool, {0, batch.size()}, 1, [&](Range r) {
    Tensor result = op(batch[r.begin]);
    std::lock_guard lock(mutex);
    results.push_back(std::move(result));
  });
  return results;
}

}  // namespace lab03
