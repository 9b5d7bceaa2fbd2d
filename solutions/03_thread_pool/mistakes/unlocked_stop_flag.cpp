// Mistake: the destructor sets stopping_ without holding the mutex ("it is only a bool, and
// notify_all() follows"). The workers read it under the mutex, so the write is ordered with none of
// those reads: a data race. A worker that has just found nothing to do can miss both the write and
// the notification and sleep forever, but only at an unlucky instant: the functional tests almost
// always pass, ThreadSanitizer reports it on every run.
// Checked by: ThreadPool.RunsTasksOnAllItsWorkersAtOnce
// Expect: WARNING: ThreadSanitizer: data race
// Expect: unlocked_stop_flag.cpp
#include "thread_pool.hpp"

namespace lab03 {

ThreadPool::~ThreadPool() {
  stopping_ = true;
  work_available_.notify_all();
  workers_.clear();
}

}  // namespace lab03
