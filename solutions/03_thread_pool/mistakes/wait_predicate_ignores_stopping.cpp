// Mistake: work()'s wait predicate looks at the queue only. The destructor sets stopping_ and
// notifies every worker, but each wakes, finds the queue empty, and sleeps again: join() waits for
// them forever. Every task runs; only destroying a pool hangs.
// Checked by: ThreadPool.RunsTasksOnAllItsWorkersAtOnce
// Expect: the pool's destructor woke its workers, but each went back to sleep
// Expect: return stopping_ || !queue_.empty();
#include "thread_pool.hpp"

namespace lab03 {

// (The constructor too: the reference's may have its own work() inlined.)
ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
}

void ThreadPool::work() {
  current_ = this;
  for (;;) {
    std::packaged_task<void()> task;
    {
      std::unique_lock lock(mutex_);
      work_available_.wait(lock, [this] { return !queue_.empty(); });  // stopping_ left out
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace lab03
