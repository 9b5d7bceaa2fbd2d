// Mistake: process_batch gives each worker batch.size() / threads tensors: the remainder is
// dropped.
// Checked by: ProcessBatch.SameResultsAsSerialOnEveryPool
// Expect: your results match results for the first 39 of 40 tensors only
#include "thread_pool.hpp"

namespace lab03 {

std::vector<Tensor> process_batch(ThreadPool& pool, std::span<const Tensor> batch,
                                  const TensorOp& op) {
  std::vector<Tensor> results(batch.size());
  const std::size_t share = batch.size() / pool.size();
  std::vector<std::future<void>> done;
  for (unsigned t = 0; t < pool.size(); ++t)
    done.push_back(pool.submit([&, t] {
      for (std::size_t i = t * share; i < (t + 1) * share; ++i) results[i] = op(batch[i]);
    }));
  for (std::future<void>& f : done) f.get();
  return results;
}

}  // namespace lab03
