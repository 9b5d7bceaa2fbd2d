// Mistake: the destructor sets stopping_ and joins, but never notifies: the workers sleep on the
// condition variable through the change, and join() waits for them forever.
// Checked by: ParallelFor.EveryIndexInExactlyOneChunk
// Expect: once the test's calls returned
// Expect: on the condition variable with nothing queued
// Expect: then work_available_.notify_all(), then join
#include "thread_pool.hpp"

namespace lab03 {

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  workers_.clear();
}

}  // namespace lab03
