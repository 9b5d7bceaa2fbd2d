// Mistake: the constructor's loop starts at 1, so the pool starts one worker fewer than asked; a
// pool of 1 has none, and its tasks never run.
// Checked by: ThreadPool.RunsTasksOnAllItsWorkersAtOnce
// Expect: ThreadPool(1) made a pool whose size() is 0
// Expect: the constructor must start exactly `threads` workers
#include "thread_pool.hpp"

#include <stdexcept>

namespace lab03 {

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) throw std::invalid_argument("ThreadPool: a pool needs at least one thread");
  for (unsigned t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
}

}  // namespace lab03
