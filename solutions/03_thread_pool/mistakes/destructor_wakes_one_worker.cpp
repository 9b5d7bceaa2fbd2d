// Mistake: the destructor wakes one worker (notify_one) where all must leave: with two workers or
// more, the others sleep on, and join() waits for them forever.
// Checked by: ThreadPool.RunsTasksOnAllItsWorkersAtOnce
// Expect: the sleepers were never woken
// Expect: notify_one() wakes one thread only
#include "thread_pool.hpp"

namespace lab03 {

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_one();
  workers_.clear();
}

}  // namespace lab03
