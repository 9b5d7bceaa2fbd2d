// Mistake: an idle worker polls the queue (lock, look, unlock, yield) instead of sleeping on the
// condition variable: every idle worker keeps a core busy.
// Checked by: ThreadPool.IdleWorkersSleep
// Expect: the pool's workers busy-wait
#include "thread_pool.hpp"

namespace lab03 {

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
}

void ThreadPool::work() {
  current_ = this;
  for (;;) {
    std::unique_lock lock(mutex_);
    if (queue_.empty()) {
      if (stopping_) return;
      lock.unlock();
      std::this_thread::yield();
      continue;
    }
    std::packaged_task<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
  }
}

}  // namespace lab03
