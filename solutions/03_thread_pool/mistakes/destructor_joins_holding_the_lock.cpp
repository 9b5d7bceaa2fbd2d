// Mistake: the destructor joins the workers while it still holds the pool's mutex: woken, each
// worker waits to lock it again, and join() waits for them forever.
// Checked by: ThreadPool.RunsTasksOnAllItsWorkersAtOnce
// Expect: the pool's destructor holds the pool's mutex while it joins the workers
// Expect: It waits at solutions/03_thread_pool/mistakes/destructor_joins_holding_the_lock.cpp:
// Expect: in ThreadPool::~ThreadPool (inside std::vector::clear, which this line calls
#include "thread_pool.hpp"

namespace lab03 {

ThreadPool::~ThreadPool() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  work_available_.notify_all();
  workers_.clear();  // the mistake: joined inside the lock's scope
}

}  // namespace lab03
