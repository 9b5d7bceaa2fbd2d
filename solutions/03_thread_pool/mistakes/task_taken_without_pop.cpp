// Mistake: a worker moves the task out of the queue's front() but never pops it: the next worker
// takes the same, now empty, task and runs it again.
// Checked by: ThreadPool.DestructorFinishesTasksSubmittedByTasks
// Expect: std::terminate was called (std::future_error: No associated state)
// Expect: take each task from the queue once (pop it as you take it, under the same lock
// Lab 03: my implementation.
#include "thread_pool.hpp"

#include "relu_chunk.hpp"

#include <workbook/require.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>

namespace lab03 {

// --- Step 1: the pool ----------------------------------------------------------------------------

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) throw std::invalid_argument("ThreadPool: a pool needs at least one thread");
  workers_.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) {
    workers_.emplace_back([this] { work(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_all();
  workers_.clear();  // jthread joins
}

std::future<void> ThreadPool::submit(std::function<void()> task) {
  if (!task) throw std::invalid_argument("ThreadPool::submit: the task is an empty std::function");
  std::packaged_task<void()> packaged(std::move(task));
  std::future<void> future = packaged.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(packaged));
  }
  work_available_.notify_one();
  return future;
}

void ThreadPool::work() {
  current_ = this;
  while (true) {
    std::packaged_task<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_ && queue_.empty()) return;
      task = std::move(queue_.front());
    }
    task();  // a packaged_task stores any exception in its future
  }
}

// --- Step 2: parallel_for ------------------------------------------------------------------------

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  if (grain == 0) throw std::invalid_argument("parallel_for: grain must be at least 1");
  if (range.end < range.begin)
    throw std::invalid_argument("parallel_for: the range ends before it begins");
  if (range.size() == 0) return;

  if (pool.is_worker_thread()) {
    // inside a task of this pool: run every chunk here, but keep going past exceptions
    std::exception_ptr first;
    for (std::size_t b = range.begin; b < range.end; b += grain) {
      const Range chunk{b, std::min(b + grain, range.end)};
      try {
        body(chunk);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
    return;
  }

  std::vector<std::future<void>> futures;
  futures.reserve((range.size() + grain - 1) / grain);
  for (std::size_t b = range.begin; b < range.end; b += grain) {
    const Range chunk{b, std::min(b + grain, range.end)};
    futures.push_back(pool.submit([&body, chunk] { body(chunk); }));
  }
  // wait for all of them first: body belongs to the caller
  for (auto& f : futures) f.wait();
  for (auto& f : futures) f.get();  // rethrows the lowest-numbered chunk's exception
}

// --- Step 3: parallel_relu -----------------------------------------------------------------------

void parallel_relu(ThreadPool& pool, std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("parallel_relu", x, "x", y, "y");
  const Stores stores = stores_for(y.size_bytes());
  constexpr std::size_t kGrain = std::size_t{1} << 16;  // 256 KiB of floats per chunk
  parallel_for(pool, Range{0, x.size()}, kGrain, [&](Range r) {
    relu_chunk(x.subspan(r.begin, r.size()), y.subspan(r.begin, r.size()), stores);
  });
}

// --- Step 4: process_batch -----------------------------------------------------------------------

std::vector<Tensor> process_batch(ThreadPool& pool, std::span<const Tensor> batch,
                                  const TensorOp& op) {
  if (!op) throw std::invalid_argument("process_batch: the operation is an empty std::function");
  std::vector<Tensor> results(batch.size());
  parallel_for(pool, Range{0, batch.size()}, 1, [&](Range r) {
    for (std::size_t i = r.begin; i < r.end; ++i) results[i] = op(batch[i]);
  });
  return results;
}

}  // namespace lab03
