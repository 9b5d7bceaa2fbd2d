#pragma once
/// \file thread_pool.hpp
/// \brief Lab 03: a thread pool and the parallel loops built on it, the interface you implement in
/// thread_pool.cpp. Read README.md (the handout) first.
///
/// Four pieces, one step each: ThreadPool (step 1), parallel_for (step 2), parallel_relu (step 3)
/// and process_batch (step 4). Each of the later ones is a few lines on top of the one before.

#include <workbook/tensor.hpp>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace lab03 {

/// A fixed set of worker threads that run the tasks handed to them, oldest first.
///
/// What the pool guarantees (the tests check each point):
/// - size() workers, started by the constructor, each running tasks until the pool is destroyed;
/// - every submitted task runs exactly once, on one of the workers (never on the submitting
/// thread);
/// - an exception a task throws is caught and stored in the std::future that submit() returned,
///   whose get() rethrows it; the worker goes on with the next task;
/// - idle workers sleep on a condition variable: they use no CPU while there is nothing to do;
/// - the destructor first finishes every task already submitted (those still in the queue too,
///   and any they submit in turn), then joins the workers: no task is lost, so every future the
///   pool handed out becomes ready.
/// A task may submit more tasks. A task must not destroy its own pool (a thread cannot join
/// itself).
class ThreadPool {
 public:
  /// Starts `threads` workers. Throws std::invalid_argument when threads is 0.
  explicit ThreadPool(unsigned threads);
  /// Finishes the queued tasks, then stops and joins the workers (see above).
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The number of workers.
  unsigned size() const { return static_cast<unsigned>(workers_.size()); }

  /// Queues `task` and returns at once; a worker runs it soon after. The future becomes ready when
  /// the task has finished, and holds its exception if it threw. Throws std::invalid_argument for
  /// an empty std::function.
  std::future<void> submit(std::function<void()> task);

  /// True when the calling thread is one of this pool's workers, that is, when called from inside
  /// one of its tasks. parallel_for needs it (see there).
  bool is_worker_thread() const { return current_ == this; }

 private:
  /// The loop every worker runs: wait for a task, run it, repeat; leave once the pool is stopping
  /// and the queue is empty.
  void work();

  std::mutex mutex_;                        ///< guards queue_ and stopping_
  std::condition_variable work_available_;  ///< notified when a task is queued or stopping_ set
  std::deque<std::packaged_task<void()>> queue_;  ///< tasks not started yet, oldest first
  bool stopping_ = false;                         ///< set by the destructor
  /// Declared last, so destroyed first: were the constructor to fail half-way, the members the
  /// workers use (mutex_, queue_, ...) must outlive the threads.
  std::vector<std::jthread> workers_;
  /// The pool whose worker runs on this thread (set by work()), or nullptr.
  static inline thread_local const ThreadPool* current_ = nullptr;
};

/// A half-open range of indices, [begin, end).
struct Range {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
  bool operator==(const Range&) const = default;
};

/// Runs body(chunk) for every chunk of `range` on the pool's workers, in parallel, and returns when
/// all of them have finished. The chunks are [begin, begin + grain), [begin + grain, begin + 2
/// grain),
/// ..., the last one shorter when grain does not divide range.size().
///
/// - The chunks depend on range and grain alone, never on the number of threads or on timing: a
///   result computed chunk by chunk and combined in chunk order is the same on every pool.
/// - Every chunk runs exactly once, even when some throw. If any does, parallel_for rethrows, after
///   every chunk has finished, the exception of the lowest-numbered chunk that threw.
/// - body is called from several threads at once: the chunks must write to disjoint places.
/// - An empty range calls nothing. A range of a single chunk may run in the calling thread.
/// - Called from inside a task of the same pool (is_worker_thread()), it runs every chunk in the
///   calling thread: waiting there for the other workers could wait forever, since they may all be
///   doing the same.
/// - Throws std::invalid_argument when grain is 0 or range.end < range.begin.
void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body);

/// y[i] = max(x[i], 0) for every i, in parallel on the pool: chunks of x and y, each by relu_chunk
/// (relu_chunk.hpp, given). NaN stays NaN, as in lab 01. x and y have the same size; y may be x
/// itself (in place) but not a shifted view of it (std::invalid_argument, as for mismatched sizes).
void parallel_relu(ThreadPool& pool, std::span<const float> x, std::span<float> y);

/// One item of a batch: a float32 vector (an xtensor container, see workbook/tensor.hpp).
using Tensor = workbook::Vector;
/// An operation applied to each tensor of a batch.
using TensorOp = std::function<Tensor(const Tensor&)>;

/// results[i] = op(batch[i]) for every i, computed in parallel on the pool, returned in input
/// order.
///
/// - op is called exactly once per tensor, from several threads at once.
/// - An empty batch gives an empty result without calling op; a batch with fewer tensors than the
///   pool has workers is fine (some workers have nothing to do).
/// - If op throws, process_batch rethrows, after every tensor has been processed, the exception of
///   the lowest-numbered tensor whose op threw.
/// - Throws std::invalid_argument for an empty op.
std::vector<Tensor> process_batch(ThreadPool& pool, std::span<const Tensor> batch,
                                  const TensorOp& op);

}  // namespace lab03
