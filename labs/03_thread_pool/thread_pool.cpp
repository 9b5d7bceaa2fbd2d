// Lab 03: your implementation. The handout, README.md, walks through each step.
//
// Build and test:  cmake --preset lab03 && ctest        (from the repository root)
// Each function below throws workbook::NotImplemented until you replace its TODO with your code.
// [[maybe_unused]] keeps the compiler quiet about parameters a stub does not use yet: delete it as
// you go.
#include "thread_pool.hpp"

#include "relu_chunk.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>

namespace lab03 {

// --- Step 1: the pool ----------------------------------------------------------------------------

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) throw std::invalid_argument("ThreadPool: a pool needs at least one thread");
  // TODO(lab03) step 1: start `threads` workers, each running work():
  //   workers_.emplace_back([this] { work(); });
  // Then write work(), submit() and the destructor below: the tests need all four.
  throw workbook::NotImplemented("ThreadPool");
}

ThreadPool::~ThreadPool() {
  // TODO(lab03) step 1: set stopping_ (holding the mutex: why is in the handout), wake every worker
  // (work_available_.notify_all()), then join them (workers_.clear() joins each std::jthread).
  // Until you do, destroying a pool waits forever for workers that sleep on work_available_.
}

std::future<void> ThreadPool::submit(std::function<void()> task) {
  if (!task) throw std::invalid_argument("ThreadPool::submit: the task is an empty std::function");
  // TODO(lab03) step 1: wrap the task in a std::packaged_task<void()>, keep its get_future(), push
  // the packaged task onto queue_ while holding mutex_, wake one worker, return the future.
  throw workbook::NotImplemented("submit");
}

void ThreadPool::work() {
  // TODO(lab03) step 1: first `current_ = this;` (for is_worker_thread()). Then loop: wait on
  // work_available_ (with a predicate) until the queue has a task or the pool is stopping; leave
  // when it is stopping and the queue is empty; otherwise take the oldest task, release the mutex,
  // and run the task. Never run a task while holding the mutex.
  throw workbook::NotImplemented("work");
}

// --- Step 2: parallel_for ------------------------------------------------------------------------

void parallel_for([[maybe_unused]] ThreadPool& pool, Range range, std::size_t grain,
                  [[maybe_unused]] const std::function<void(Range)>& body) {
  if (grain == 0) throw std::invalid_argument("parallel_for: grain must be at least 1");
  if (range.end < range.begin)
    throw std::invalid_argument("parallel_for: the range ends before it begins");
  // TODO(lab03) step 2: split the range into chunks of `grain` (the last one shorter), submit one
  // task per chunk that calls body(chunk), and keep the futures. Wait for *all* of them before
  // looking at any result (a running chunk still uses `body`, which belongs to your caller), then
  // call get() on each in chunk order: the first one that rethrows is the lowest-numbered chunk
  // that failed. If pool.is_worker_thread(), run the chunks here instead, one after the other.
  throw workbook::NotImplemented("parallel_for");
}

// --- Step 3: parallel_relu -----------------------------------------------------------------------

void parallel_relu([[maybe_unused]] ThreadPool& pool, std::span<const float> x,
                   std::span<float> y) {
  workbook::require_elementwise("parallel_relu", x, "x", y, "y");
  // TODO(lab03) step 3: parallel_for over {0, x.size()} with a grain of your choice (the handout
  // discusses it), each chunk running relu_chunk(x.subspan(...), y.subspan(...), stores) with
  // stores = stores_for(y.size_bytes()), decided once for the whole output.
  throw workbook::NotImplemented("parallel_relu");
}

// --- Step 4: process_batch -----------------------------------------------------------------------

std::vector<Tensor> process_batch([[maybe_unused]] ThreadPool& pool,
                                  [[maybe_unused]] std::span<const Tensor> batch,
                                  const TensorOp& op) {
  if (!op) throw std::invalid_argument("process_batch: the operation is an empty std::function");
  // TODO(lab03) step 4: make a vector of batch.size() results, then parallel_for over the batch's
  // indices, each chunk computing results[i] = op(batch[i]) for its i. Return the results.
  throw workbook::NotImplemented("process_batch");
}

}  // namespace lab03
