// Mistake: work() never sets current_ = this: is_worker_thread() is false on every worker, so a
// nested parallel_for waits for workers that are all busy waiting too.
// Checked by: ParallelFor.NestedCallsDoNotDeadlock
// Expect: is_worker_thread() returned false inside a task that one of the pool's workers ran
#include "thread_pool.hpp"

namespace lab03 {

// (The constructor too: the reference's may have its own work() inlined.)
ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
}

void ThreadPool::work() {
  // The mistake: current_ = this; missing.
  for (;;) {
    std::packaged_task<void()> task;
    {
      std::unique_lock lock(mutex_);
      work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace lab03
