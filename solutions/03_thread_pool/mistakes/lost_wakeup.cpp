// Mistake: submit() queues the task but wakes no worker. A worker that is busy finds the task when
// it comes back for the next, so light use works; once every worker sleeps, a new task waits in
// the queue forever (a lost wake-up).
// Checked by: ThreadPool.RunsTasksOnAllItsWorkersAtOnce
// Expect: submitted and never started
// Expect: a lost wake-up
#include "thread_pool.hpp"

namespace lab03 {

std::future<void> ThreadPool::submit(std::function<void()> task) {
  std::packaged_task<void()> packaged(std::move(task));
  std::future<void> done = packaged.get_future();
  std::lock_guard lock(mutex_);
  queue_.push_back(std::move(packaged));
  return done;
}

}  // namespace lab03
