// Mistake: work() runs each task while it still holds the mutex. The pool's tasks then run one at a
// time, and a task that submits another deadlocks: its submit() waits for the mutex its own worker
// holds.
// Checked by: ThreadPool.TasksMaySubmitTasks
// Expect: which it holds itself
// Expect: Release the mutex before running the task
#include "thread_pool.hpp"

namespace lab03 {

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
}

void ThreadPool::work() {
  current_ = this;
  std::unique_lock lock(mutex_);
  for (;;) {
    work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::packaged_task<void()> task = std::move(queue_.front());
    queue_.pop_front();
    task();  // still holding the mutex
  }
}

}  // namespace lab03
