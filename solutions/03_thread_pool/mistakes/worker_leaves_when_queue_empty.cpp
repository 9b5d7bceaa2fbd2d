// Mistake: work() runs tasks while the queue has some and returns once it finds it empty, as it
// should only when the pool is stopping: a new pool's workers find nothing queued and end at once.
// Checked by: ThreadPool.WorkersStayWhenTheyFindTheQueueEmpty
// Expect: workers ended while the pool is still in use (not being destroyed), before any task
// Expect: work() returned before the pool was stopping
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
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace lab03
