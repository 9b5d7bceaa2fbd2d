// Mistake: work()'s wait predicate joins its two conditions with && where || is meant: false while
// tasks are queued and the pool runs. submit() notifies, the worker wakes, finds the predicate
// false and sleeps again with the task queued. Not a lost wake-up: the watchdog sees the worker
// switch after the submit, and names the predicate.
// Checked by: ThreadPool.RunsTasksOnAllItsWorkersAtOnce
// Expect: went back to sleep with the task still queued: the wait's predicate is false
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
      work_available_.wait(lock, [this] { return stopping_ && !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace lab03
