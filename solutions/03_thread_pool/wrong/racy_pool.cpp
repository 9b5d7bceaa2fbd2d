// A known-wrong thread pool, kept for one purpose: to prove that ThreadSanitizer catches a race the
// functional tests almost never see. The test lab03.sanitizer.tsan_catches_planted_race runs
// planted_race.cpp against it and passes only if TSan reports the race below. Do not copy it.
//
// The planted bug is the classic one: the destructor sets stopping_ without holding the mutex
// ("it is only a bool, and notify_all() follows"). The workers read stopping_ under the mutex, in
// their wait predicate, so the write is ordered with none of those reads: a data race, undefined
// behaviour. In practice a worker that has just found the predicate false, and is about to sleep,
// can miss both the write and the notification: it sleeps forever and the destructor hangs in
// join() (a lost wake-up). That takes an unlucky instant, so a test may pass a thousand times;
// ThreadSanitizer reports the race on the first run, because it tracks the order of accesses
// (happens-before), not their timing.
#include "thread_pool.hpp"

#include <stdexcept>

namespace lab03 {

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) throw std::invalid_argument("ThreadPool: a pool needs at least one thread");
  while (workers_.size() < threads) workers_.emplace_back(&ThreadPool::work, this);
}

ThreadPool::~ThreadPool() {
  stopping_ = true;  // THE PLANTED RACE: written without holding mutex_
  work_available_.notify_all();
  for (std::jthread& worker : workers_) worker.join();
}

std::future<void> ThreadPool::submit(std::function<void()> task) {
  std::packaged_task<void()> packaged(std::move(task));
  std::future<void> result = packaged.get_future();
  std::unique_lock lock(mutex_);
  queue_.emplace_back(std::move(packaged));
  lock.unlock();
  work_available_.notify_one();
  return result;
}

void ThreadPool::work() {
  current_ = this;
  std::unique_lock lock(mutex_);
  for (;;) {
    work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;
    std::packaged_task<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace lab03
