// Mistake: work() sleeps in an if, without a predicate, and returns whenever it then finds the
// queue empty: a worker whose task another took first (or woken for nothing) leaves for good.
// Checked by: ThreadPool.WorkersStayWhenTheyFindTheQueueEmpty
// Expect: workers ended while the pool is still in use (not being destroyed)
// Expect: it must wait in a loop until there is a task or stopping_ is set
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
      if (!stopping_ && queue_.empty()) work_available_.wait(lock);
      if (queue_.empty()) return;  // meant for stopping, but also after a stolen wake-up
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace lab03
