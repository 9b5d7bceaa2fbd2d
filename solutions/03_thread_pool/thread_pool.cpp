// Lab 03 reference solution: a thread pool on std::jthread, std::mutex and std::condition_variable,
// and the parallel loops built on it.
//
// The pool is the textbook one: a queue guarded by a mutex, workers that sleep on a condition
// variable until there is work, std::packaged_task to carry each task's exception to its future.
// parallel_for submits one task per worker (not per chunk), and the tasks, with the calling thread,
// claim chunks from a shared atomic counter: a chunk then costs one atomic increment instead of a
// trip through the queue, and a worker slowed down by anything (another process, a bigger chunk)
// simply claims fewer chunks.
#include "thread_pool.hpp"

#include "relu_chunk.hpp"

#include <workbook/require.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <stdexcept>

namespace lab03 {

// --- The pool ------------------------------------------------------------------------------------

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) throw std::invalid_argument("ThreadPool: a pool needs at least one thread");
  workers_.reserve(threads);
  try {
    for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
  } catch (...) {
    // The system refused a thread. Tell the ones already running to leave: the members are
    // destroyed next, workers_ first, and each std::jthread joins its thread.
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_available_.notify_all();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  {
    // Under the lock: a worker that has just found nothing to do, and is about to sleep, would
    // otherwise miss this change and the notification with it, and sleep forever (a lost wake-up).
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_all();
  workers_.clear();  // each std::jthread joins its worker, which leaves once the queue is empty
}

std::future<void> ThreadPool::submit(std::function<void()> task) {
  if (!task) throw std::invalid_argument("ThreadPool::submit: the task is an empty std::function");
  std::packaged_task<void()> packaged(std::move(task));
  std::future<void> done = packaged.get_future();
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(packaged));
  }
  // After unlocking, so that the worker it wakes does not at once block on the mutex we hold.
  work_available_.notify_one();
  return done;
}

void ThreadPool::work() {
  current_ = this;
  for (;;) {
    std::packaged_task<void()> task;
    {
      std::unique_lock lock(mutex_);
      // The predicate guards against spurious wake-ups, and against a notification sent before
      // this worker went to sleep: it sleeps only while there is truly nothing to do.
      work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every task is done
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    // Outside the lock: other workers take tasks meanwhile, and the task may submit more. A
    // packaged_task stores an exception in its future instead of letting it escape.
    task();
  }
}

// --- parallel_for --------------------------------------------------------------------------------

namespace {

// The lowest-numbered chunk that threw, and what it threw.
struct Failure {
  std::size_t chunk = std::numeric_limits<std::size_t>::max();
  std::exception_ptr error;
};

// Chunk k of `range` in chunks of `grain` (the last one may be shorter).
Range chunk_of(Range range, std::size_t grain, std::size_t k) {
  const std::size_t begin = range.begin + k * grain;
  return {begin, begin + std::min(grain, range.end - begin)};
}

// The chunks, cut into one contiguous part per thread. Each thread takes the chunks of its own
// part in order, then helps with the others' parts: a thread streams through neighbouring memory
// as long as it can (the hardware prefetchers keep their stream from one chunk to the next), and
// one that falls behind (a busy core) still gets help. Each part's counter on its own cache line:
// the threads claim from different counters, not all from one.
struct alignas(64) Part {
  std::atomic<std::size_t> next{0};  // the next chunk to claim
  std::size_t end = 0;               // one past the part's last chunk
};

// `threads` parts as equal as can be: the first chunks % threads parts have one chunk more.
// (Written without t * chunks, which could overflow for a huge range in chunks of 1.)
std::vector<Part> parts_of(std::size_t chunks, std::size_t threads) {
  std::vector<Part> parts(threads);
  const std::size_t share = chunks / threads, extra = chunks % threads;
  for (std::size_t t = 0, begin = 0; t < threads; ++t) {
    parts[t].next = begin;
    begin += share + (t < extra ? 1 : 0);
    parts[t].end = begin;
  }
  return parts;
}

// Thread `self` runs chunks until none is left: its own part's first, then the others'. A chunk
// that throws does not stop the others: every chunk runs once, and the lowest-numbered failure is
// returned. Relaxed is enough: a counter only hands out distinct numbers, and what the chunks
// write reaches the caller through the task's future, which synchronizes.
Failure run_chunks(std::vector<Part>& parts, std::size_t self, Range range, std::size_t grain,
                   const std::function<void(Range)>& body) {
  Failure first;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    Part& part = parts[(self + i) % parts.size()];
    for (std::size_t k; (k = part.next.fetch_add(1, std::memory_order_relaxed)) < part.end;) {
      try {
        body(chunk_of(range, grain, k));
      } catch (...) {
        if (k < first.chunk) first = {k, std::current_exception()};
      }
    }
  }
  return first;
}

}  // namespace

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  if (grain == 0) throw std::invalid_argument("parallel_for: grain must be at least 1");
  if (range.end < range.begin)
    throw std::invalid_argument("parallel_for: the range ends before it begins");
  const std::size_t chunks = range.size() / grain + (range.size() % grain != 0);

  // One chunk: nothing to share. From inside one of the pool's tasks: the other workers may all be
  // waiting like this one, so waiting for them could deadlock; this thread does the work itself.
  if (chunks <= 1 || pool.is_worker_thread()) {
    std::vector<Part> all = parts_of(chunks, 1);
    const Failure failure = run_chunks(all, 0, range, grain, body);
    if (failure.error) std::rethrow_exception(failure.error);
    return;
  }

  // The calling thread claims chunks too, as OpenMP's master thread does: it starts at once, while
  // each worker it wakes takes microseconds to get going. So one task fewer than there are workers:
  // with the caller, one thread per core.
  const std::size_t helpers = std::min<std::size_t>(chunks, pool.size()) - 1;
  std::vector<Part> parts = parts_of(chunks, helpers + 1);
  std::vector<Failure> failures(helpers + 1);
  std::vector<std::future<void>> done;
  done.reserve(helpers);
  {
    // The tasks use this frame's variables: whatever happens, wait for every task already submitted
    // before leaving, even if a later submit() throws.
    struct WaitForAll {
      std::vector<std::future<void>>& futures;
      ~WaitForAll() {
        for (std::future<void>& f : futures) f.wait();
      }
    } wait_for_all{done};
    for (std::size_t t = 0; t < helpers; ++t)
      done.push_back(
          pool.submit([&, t] { failures[t] = run_chunks(parts, t, range, grain, body); }));
    failures[helpers] = run_chunks(parts, helpers, range, grain, body);
  }
  for (std::future<void>& f : done)
    f.get();  // ready by now; rethrows what escaped a task, if anything
  const auto lowest =
      std::min_element(failures.begin(), failures.end(),
                       [](const Failure& a, const Failure& b) { return a.chunk < b.chunk; });
  if (lowest->error) std::rethrow_exception(lowest->error);
}

// --- parallel_relu -------------------------------------------------------------------------------

namespace {

// Chunks of 64 Ki to 1 Mi floats (256 KiB to 4 MiB), about four per worker. A chunk must be large
// enough that its few microseconds of overhead vanish next to its time (64 Ki floats take about
// 20 us even from the cache), and the hardware prefetchers like long runs; but several chunks per
// worker let a worker that falls behind (a busy core) be helped by the others. Multiples of 16
// floats, 64 bytes: no cache line is shared by two chunks (no false sharing at the borders), and
// chunks of an aligned output start aligned for the streaming stores.
constexpr std::size_t kMinReluGrain = std::size_t{64} << 10;
constexpr std::size_t kMaxReluGrain = std::size_t{1} << 20;
constexpr std::size_t kChunksPerWorker = 4;
constexpr std::size_t kCacheLineFloats = 16;

std::size_t relu_grain(std::size_t n, unsigned workers) {
  const std::size_t share = n / (kChunksPerWorker * workers);
  const std::size_t rounded = (share + kCacheLineFloats - 1) / kCacheLineFloats * kCacheLineFloats;
  return std::clamp(rounded, kMinReluGrain, kMaxReluGrain);
}

}  // namespace

void parallel_relu(ThreadPool& pool, std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("parallel_relu", x, "x", y, "y");
  const Stores stores = stores_for(y.size_bytes());  // for the whole output, not per chunk
  parallel_for(pool, {0, x.size()}, relu_grain(x.size(), pool.size()), [&](Range r) {
    relu_chunk(x.subspan(r.begin, r.size()), y.subspan(r.begin, r.size()), stores);
  });
}

// --- process_batch -------------------------------------------------------------------------------

std::vector<Tensor> process_batch(ThreadPool& pool, std::span<const Tensor> batch,
                                  const TensorOp& op) {
  if (!op) throw std::invalid_argument("process_batch: the operation is an empty std::function");
  // Each result goes to its own slot, so the order is the input order whatever the timing.
  std::vector<Tensor> results(batch.size());
  // One tensor per chunk: claiming a chunk costs one atomic increment, so the finest split is also
  // the best balanced one (tensors of different sizes take different times).
  parallel_for(pool, {0, batch.size()}, 1, [&](Range r) {
    for (std::size_t i = r.begin; i < r.end; ++i) results[i] = op(batch[i]);
  });
  return results;
}

}  // namespace lab03
