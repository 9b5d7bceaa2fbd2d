// Mistake: one task per worker, each n / threads elements: the remainder n % threads is dropped.
// Checked by: ParallelRelu.UnalignedAndInPlace
// Expect: the last 2 elements were never written
// Expect: the split into chunks drops the remainder
#include "relu_chunk.hpp"
#include "thread_pool.hpp"

namespace lab03 {

void parallel_relu(ThreadPool& pool, std::span<const float> x, std::span<float> y) {
  const Stores stores = stores_for(y.size_bytes());
  const std::size_t per_thread = x.size() / pool.size();
  std::vector<std::future<void>> done;
  for (unsigned t = 0; t < pool.size(); ++t)
    done.push_back(pool.submit([=] {
      relu_chunk(x.subspan(t * per_thread, per_thread), y.subspan(t * per_thread, per_thread),
                 stores);
    }));
  for (std::future<void>& f : done) f.get();
}

}  // namespace lab03
