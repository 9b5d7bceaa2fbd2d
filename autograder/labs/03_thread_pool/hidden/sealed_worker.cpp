// Lab 03's sealed worker table: how the checker calls the pool, parallel_for, parallel_relu and
// process_batch. Argument numbers match the calls in sealed_test.cpp.
//
// The tasks, chunk bodies and operations handed to the student's code are this file's: each one
// writes what it did into the shared memory (its result, the id of the OS thread that ran it, how
// many times it ran), and the checker judges that record. Nothing the pool says about itself is
// trusted. To show that work ran on several threads without relying on timing luck, the tasks meet:
// a task waits (up to kMeetingSeconds) until another one has started, which can only happen when
// two threads run them at the same time.
#include "batch_ops.hpp"
#include "relu_chunk.hpp"
#include "thread_pool.hpp"

#include <grade/sealed_worker.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using lab03::Range;
using lab03::Tensor;
using lab03::ThreadPool;

// Long enough for any scheduler to start a runnable thread, even on a loaded machine; short enough
// that a pool running one task at a time fails within the checker's time limit per call.
constexpr auto kMeetingSeconds = std::chrono::seconds(10);

std::int32_t thread_id() {
  return static_cast<std::int32_t>(gettid());
}

unsigned threads_of(const workbook::sealed::Call& call) {
  return static_cast<unsigned>(call.integer(0));
}

// Counters in the shared memory, incremented from several threads at once. Counting there (not in a
// local array) keeps the record right even when a task runs after the call returned: the checker
// then sees the count as it was when the call returned.
void zero(std::span<std::int32_t> counts) {
  std::fill(counts.begin(), counts.end(), 0);
}
void count(std::span<std::int32_t> counts, std::size_t i) {
  std::atomic_ref<std::int32_t>(counts[i]).fetch_add(1, std::memory_order_relaxed);
}

// Tasks that wait for each other: each arrive()s, and a task that must see others waits until
// `count` have arrived or the deadline passes.
class Meeting {
 public:
  Meeting() : deadline_(std::chrono::steady_clock::now() + kMeetingSeconds) {}
  int arrive() {
    int number;
    {
      std::lock_guard lock(mutex_);
      number = ++arrived_;
    }
    arrival_.notify_all();
    return number;
  }
  /// True when `count` tasks have arrived before the deadline.
  bool wait_for(int count) {
    std::unique_lock lock(mutex_);
    return arrival_.wait_until(lock, deadline_, [&] { return arrived_ >= count; });
  }

 private:
  std::chrono::steady_clock::time_point deadline_;
  std::mutex mutex_;
  std::condition_variable arrival_;
  int arrived_ = 0;
};

}  // namespace

// --- ThreadPool ----------------------------------------------------------------------------------

// threads, chunk, x, y, runs, tids: one task per chunk of x, each writing ReLU of its chunk to y,
// counting its run and recording its thread. Returns the submitting thread's id and size().
WORKBOOK_SEALED_FUNCTION(pool_tasks) {
  const auto chunk = static_cast<std::size_t>(call.integer(1));
  const std::span<const float> x = call.in<float>(2);
  const std::span<float> y = call.out<float>(3);
  const std::span<std::int32_t> runs = call.out<std::int32_t>(4), tids = call.out<std::int32_t>(5);
  zero(runs);
  unsigned size = 0;
  {
    ThreadPool pool(threads_of(call));
    size = pool.size();
    std::vector<std::future<void>> done;
    for (std::size_t t = 0; t < runs.size(); ++t) {
      done.push_back(pool.submit([=] {
        const std::size_t begin = std::min(t * chunk, x.size()),
                          n = std::min(chunk, x.size() - begin);
        lab03::relu_chunk(x.subspan(begin, n), y.subspan(begin, n), lab03::Stores::ordinary);
        tids[t] = thread_id();
        count(runs, t);
      }));
    }
    for (std::future<void>& f : done) f.get();
  }
  call.returns(thread_id());
  call.returns(size);
}

// threads, tids: as many tasks as workers, each waiting until all have started. Returns the
// submitting thread's id and how many tasks saw all the others start.
WORKBOOK_SEALED_FUNCTION(pool_meeting) {
  const std::span<std::int32_t> tids = call.out<std::int32_t>(1);
  Meeting meeting;
  std::atomic<int> met{0};
  {
    ThreadPool pool(threads_of(call));
    std::vector<std::future<void>> done;
    for (std::size_t t = 0; t < tids.size(); ++t) {
      done.push_back(pool.submit([&, t] {
        tids[t] = thread_id();
        meeting.arrive();
        if (meeting.wait_for(static_cast<int>(tids.size()))) ++met;
      }));
    }
    for (std::future<void>& f : done) f.get();
  }
  call.returns(thread_id());
  call.returns(met.load());
}

// threads, outcomes, runs: task i throws std::runtime_error("task i") when i % 5 == 2. outcomes[i]:
// 0 when get() returned, 1 when it rethrew the task's own exception, 2 for anything else. Then 10
// more tasks; returns how many of those ran (the workers survived the exceptions).
WORKBOOK_SEALED_FUNCTION(pool_exceptions) {
  const std::span<std::int32_t> outcomes = call.out<std::int32_t>(1),
                                runs = call.out<std::int32_t>(2);
  zero(runs);
  std::atomic<int> after{0};
  {
    ThreadPool pool(threads_of(call));
    std::vector<std::future<void>> done;
    for (std::size_t t = 0; t < outcomes.size(); ++t) {
      done.push_back(pool.submit([=] {
        count(runs, t);
        if (t % 5 == 2) throw std::runtime_error("task " + std::to_string(t));
      }));
    }
    for (std::size_t t = 0; t < outcomes.size(); ++t) {
      try {
        done[t].get();
        outcomes[t] = 0;
      } catch (const std::runtime_error& e) {
        outcomes[t] = e.what() == "task " + std::to_string(t) ? 1 : 2;
      } catch (...) {
        outcomes[t] = 2;
      }
    }
    std::vector<std::future<void>> more;
    for (int i = 0; i < 10; ++i) more.push_back(pool.submit([&after] { ++after; }));
    for (std::future<void>& f : more) f.get();
  }
  call.returns(after.load());
}

// threads, length, runs: a chain of tasks, each submitting the next; waits for the last one.
WORKBOOK_SEALED_FUNCTION(pool_chain) {
  const std::span<std::int32_t> runs = call.out<std::int32_t>(1);
  zero(runs);
  std::promise<void> last_ran;
  std::function<void(std::size_t)> link;
  ThreadPool pool(threads_of(call));  // after what its tasks use: destroyed (and drained) first
  link = [&](std::size_t i) {
    count(runs, i);
    if (i + 1 == runs.size())
      last_ran.set_value();
    else
      pool.submit([&link, i] { link(i + 1); });
  };
  if (runs.empty()) return;
  pool.submit([&link] { link(0); });
  last_ran.get_future().get();
}

// threads, queued, runs: destroys a pool whose workers are all held by blocking tasks until 100 ms
// after the call began (the destructor is running by then), with `queued` tasks waiting behind them
// and then a chain of tasks that submit tasks. runs: the blocking tasks first, then the queued
// ones, then the chain; every one must have run once when the destructor returns.
WORKBOOK_SEALED_FUNCTION(pool_drain) {
  const unsigned threads = threads_of(call);
  const auto queued = static_cast<std::size_t>(call.integer(1));
  const std::span<std::int32_t> runs = call.out<std::int32_t>(2);
  zero(runs);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  // Started first, so that a pool that runs tasks on the submitting thread is not stuck for ever in
  // the first blocking task (it fails no test here: it does finish every task).
  std::jthread opener([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.set_value();
  });
  const std::size_t chain_begin = threads + queued;
  std::function<void(std::size_t)> link;
  ThreadPool pool(threads);
  link = [&](std::size_t i) {
    count(runs, i);
    if (i + 1 < runs.size()) pool.submit([&link, i] { link(i + 1); });
  };
  for (std::size_t t = 0; t < threads; ++t) {
    pool.submit([=] {
      open.wait();
      count(runs, t);
    });
  }
  for (std::size_t t = threads; t < chain_begin; ++t) pool.submit([=] { count(runs, t); });
  if (chain_begin < runs.size()) pool.submit([&link, chain_begin] { link(chain_begin); });
}  // the pool is destroyed first, while its workers wait for the gate, then link, then the opener

// --- parallel_for --------------------------------------------------------------------------------

// threads, begin, end, grain, runs, chunk_begin, chunk_end, tids, meet: runs[i] counts the chunks
// that contained i; chunk_begin/end[i] and tids[i] record the chunk and thread that did. With meet,
// the first chunk to start waits until a second one has started. Returns the submitting thread's
// id, whether the first chunk met a second, and how many ranges fell outside [begin, end).
WORKBOOK_SEALED_FUNCTION(parallel_for) {
  const Range range{static_cast<std::size_t>(call.integer(1)),
                    static_cast<std::size_t>(call.integer(2))};
  const auto grain = static_cast<std::size_t>(call.integer(3));
  const std::span<std::int32_t> runs = call.out<std::int32_t>(4),
                                chunk_begin = call.out<std::int32_t>(5),
                                chunk_end = call.out<std::int32_t>(6),
                                tids = call.out<std::int32_t>(7);
  const bool meet = call.integer(8) != 0;
  zero(runs);
  Meeting meeting;
  std::atomic<bool> met{false};
  std::atomic<int> strays{0};
  ThreadPool pool(threads_of(call));
  lab03::parallel_for(pool, range, grain, [&](Range r) {
    if (meet && meeting.arrive() == 1) met = meeting.wait_for(2);
    if (r.begin > r.end || r.end > runs.size()) {
      ++strays;
      return;
    }
    for (std::size_t i = r.begin; i < r.end; ++i) {
      count(runs, i);
      chunk_begin[i] = static_cast<std::int32_t>(r.begin);
      chunk_end[i] = static_cast<std::int32_t>(r.end);
      tids[i] = thread_id();
    }
  });
  call.returns(thread_id());
  call.returns(met.load() ? 1 : 0);
  call.returns(strays.load());
}

// threads, grain, runs: parallel_for over 8 outer chunks, each calling parallel_for on the same
// pool over runs.size() / 8 indices in chunks of grain. runs[outer * inner_size + i].
WORKBOOK_SEALED_FUNCTION(parallel_for_nested) {
  const auto grain = static_cast<std::size_t>(call.integer(1));
  const std::span<std::int32_t> runs = call.out<std::int32_t>(2);
  zero(runs);
  const std::size_t inner = runs.size() / 8;
  ThreadPool pool(threads_of(call));
  lab03::parallel_for(pool, {0, 8}, 1, [&](Range outer) {
    lab03::parallel_for(pool, {0, inner}, grain, [&](Range r) {
      for (std::size_t i = r.begin; i < r.end; ++i) count(runs, outer.begin * inner + i);
    });
  });
}

// threads, runs: parallel_for over runs.size() chunks of one index; chunk 70 throws at once,
// chunk 30 20 ms later ("chunk 70", "chunk 30"). Returns the chunk whose exception parallel_for
// rethrew, -1 when it returned normally, -2 for anything else.
WORKBOOK_SEALED_FUNCTION(parallel_for_exceptions) {
  const std::span<std::int32_t> runs = call.out<std::int32_t>(1);
  zero(runs);
  int thrown = -1;
  {
    ThreadPool pool(threads_of(call));
    try {
      lab03::parallel_for(pool, {0, runs.size()}, 1, [&](Range r) {
        if (r.begin >= runs.size()) return;
        count(runs, r.begin);
        if (r.begin == 30) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          throw std::runtime_error("chunk 30");
        }
        if (r.begin == 70) throw std::runtime_error("chunk 70");
      });
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      thrown = what == "chunk 30" ? 30 : what == "chunk 70" ? 70 : -2;
    } catch (...) {
      thrown = -2;
    }
  }
  call.returns(thrown);
}

// --- parallel_relu -------------------------------------------------------------------------------

// threads, x, y (the same region for in place).
WORKBOOK_SEALED_FUNCTION(parallel_relu) {
  ThreadPool pool(threads_of(call));
  lab03::parallel_relu(pool, call.in<float>(1), call.out<float>(2));
}

// --- process_batch -------------------------------------------------------------------------------

namespace {

// The batch: one per worker process, kept from call to call and refilled in place when the sizes
// are the same, so that "the same buffers with new values" holds here too.
std::vector<Tensor>& batch_of(std::span<const std::int32_t> sizes, std::span<const float> values) {
  static std::vector<Tensor> batch;
  batch.resize(sizes.size());
  std::size_t at = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto n = static_cast<std::size_t>(sizes[i]);
    if (batch[i].size() != n) batch[i] = Tensor(Tensor::shape_type{n});
    std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(at), n, batch[i].data());
    at += n;
  }
  return batch;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

// threads, sizes, values, results, result_sizes, runs, tids, after, mode: the batch is `sizes`
// tensors cut from `values`; op is the polynomial of batch_ops.hpp. runs and tids: per tensor, the
// calls of op and the thread of the last one. after: the batch's values once process_batch
// returned. mode 1: the first call of op waits until a second has started; mode 2: op throws for
// tensors 4 ("tensor 4", after 20 ms) and 9 ("tensor 9"). Returns the number of results, their
// elements, the calls of op on a tensor not of the batch, whether the first call met a second
// (mode 1), and the tensor whose exception process_batch rethrew (mode 2; -1 none, -2 another).
WORKBOOK_SEALED_FUNCTION(process_batch) {
  const std::span<const std::int32_t> sizes = call.in<std::int32_t>(1);
  const std::span<const float> values = call.in<float>(2);
  const std::span<float> out = call.out<float>(3), after = call.out<float>(7);
  const std::span<std::int32_t> result_sizes = call.out<std::int32_t>(4),
                                runs = call.out<std::int32_t>(5), tids = call.out<std::int32_t>(6);
  const std::int64_t mode = call.integer(8);
  std::vector<Tensor>& batch = batch_of(sizes, values);
  zero(runs);
  Meeting meeting;
  std::atomic<bool> met{false};
  std::atomic<int> strays{0};
  // Which tensor of the batch op was given: by address, or by its values if the submission copied
  // it (the checker makes the tensors differ).
  auto index_of = [&](const Tensor& t) -> std::ptrdiff_t {
    if (!batch.empty() && &t >= batch.data() && &t < batch.data() + batch.size())
      return &t - batch.data();
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (same_bits(batch[i], t)) return static_cast<std::ptrdiff_t>(i);
    return -1;
  };
  const lab03::TensorOp op = [&](const Tensor& t) {
    const std::ptrdiff_t i = index_of(t);
    if (i < 0) {
      ++strays;
    } else {
      count(runs, static_cast<std::size_t>(i));
      tids[static_cast<std::size_t>(i)] = thread_id();
    }
    if (mode == 1 && meeting.arrive() == 1) met = meeting.wait_for(2);
    if (mode == 2 && i == 4) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      throw std::runtime_error("tensor 4");
    }
    if (mode == 2 && i == 9) throw std::runtime_error("tensor 9");
    return lab03::ops::polynomial(t);
  };
  std::vector<Tensor> results;
  int thrown = -1;
  {
    ThreadPool pool(threads_of(call));
    try {
      results = lab03::process_batch(pool, batch, op);
    } catch (const std::runtime_error& e) {
      if (mode != 2) throw;
      const std::string what = e.what();
      thrown = what == "tensor 4" ? 4 : what == "tensor 9" ? 9 : -2;
    }
  }
  std::size_t at = 0, elements = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    elements += results[i].size();
    if (i < result_sizes.size()) result_sizes[i] = static_cast<std::int32_t>(results[i].size());
    if (at + results[i].size() <= out.size())
      std::copy_n(results[i].data(), results[i].size(), out.begin() + at);
    at += results[i].size();
  }
  at = 0;
  for (const Tensor& t : batch) {
    std::copy_n(t.data(), std::min(t.size(), after.size() - at), after.begin() + at);
    at += std::min(t.size(), after.size() - at);
  }
  call.returns(static_cast<double>(results.size()));
  call.returns(static_cast<double>(elements));
  call.returns(strays.load());
  call.returns(met.load() ? 1 : 0);
  call.returns(thrown);
}
