// Lab 03 hidden tests, sealed: the pool, parallel_for, parallel_relu and process_batch run in a
// worker process that holds the student's code; the inputs, the oracle and the verdict stay here.
// The worker's tasks record what they did in shared memory (results, runs, the OS thread of each),
// so these tests check the pool's promises from the outside, without trusting anything it reports:
// every task and index ran exactly once, results are right and in order, exceptions reach the
// caller, the destructor loses nothing, and the work ran on several threads at once. That last
// check does not depend on timing: the tasks wait for each other (up to 10 s), which a pool that
// runs one task at a time can never satisfy, and a real pool always does.
#include "batch_ops.hpp"
#include "thread_pool_oracle.hpp"

#include <grade/sealed.hpp>

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace {

using lab03::Tensor;
using workbook::sealed::input;
using workbook::sealed::output;
using workbook::sealed::Region;
using workbook::sealed::Reply;
using workbook::sealed::Worker;
using I32 = std::int32_t;

// One worker, two, an odd number, and more workers than the grading machine has cores.
constexpr unsigned kPoolSizes[] = {1, 2, 3, 8};
constexpr unsigned kSeveralThreads[] = {2, 3, 8};

std::string pool_of(unsigned threads) {
  return "a pool of " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

std::vector<float> values(const workbook::Vector& v) {
  return {v.begin(), v.end()};
}
void put(Region<float>& r, const std::vector<float>& v) {
  std::copy(v.begin(), v.end(), r.data());
}

// "" when runs[i] is 1 for every i in [begin, end) and 0 elsewhere; else the first that is not.
std::string not_once(const Region<I32>& runs, const std::string& thing, std::size_t begin = 0,
                     std::size_t end = SIZE_MAX) {
  end = std::min(end, runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const I32 want = i >= begin && i < end ? 1 : 0, got = runs.data()[i];
    if (got != want)
      return thing + " " + std::to_string(i) + " ran " + std::to_string(got) +
             " times instead of " + (want ? "once" : "never");
  }
  return "";
}

// The distinct thread ids in tids[begin, end).
std::set<I32> threads_in(const Region<I32>& tids, std::size_t begin = 0,
                         std::size_t end = SIZE_MAX) {
  end = std::min(end, tids.size());
  return {tids.data() + begin, tids.data() + end};
}

std::string reply_text(const Reply& reply) {
  return reply.ok ? std::string("a normal return") : reply.message;
}

// --- ThreadPool ----------------------------------------------------------------------------------

// Tasks that each compute ReLU of 16 floats and record their thread.
TEST(ThreadPool, RunsEveryTaskExactlyOnce) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (unsigned n : kPoolSizes) {
    worker.reset();
    const std::size_t elements = 50000 + 37 * n, chunk = 16, tasks = (elements + chunk - 1) / chunk;
    const std::vector<float> x = values(workbook::normal(elements, rng));
    Region<float> xr = worker.alloc<float>(elements, 1), yr = worker.alloc<float>(elements, 2);
    Region<I32> runs = worker.alloc<I32>(tasks), tids = worker.alloc<I32>(tasks);
    put(xr, x);
    const Reply reply =
        worker.call("pool_tasks", {std::size_t{n}, chunk, input(xr, "x"), output(yr, "y"),
                                   output(runs, "runs"), output(tids, "thread ids")});
    ASSERT_CALL(reply) << tasks << " tasks on " << pool_of(n);
    EXPECT_EQ(reply.value(1), n) << "ThreadPool(" << n << ").size(): the pool must start exactly "
                                 << n << " workers";
    ASSERT_EQ(not_once(runs, "task"), "")
        << "with " << pool_of(n) << ": every submitted task runs exactly once";
    ASSERT_CORRECT(lab03::oracle::check_relu(x, yr.copy(), "ThreadPool::submit"))
        << "each task wrote ReLU of its 16 floats; " << tasks << " tasks on " << pool_of(n);
    const std::set<I32> threads = threads_in(tids);
    ASSERT_FALSE(threads.contains(static_cast<I32>(reply.value(0))))
        << "with " << pool_of(n)
        << ", a task ran on the thread that submitted it: tasks belong on the workers";
    EXPECT_LE(threads.size(), n)
        << "the tasks ran on " << threads.size() << " different threads, but " << pool_of(n)
        << " has " << n << ": start the workers once, in the constructor, not a thread per task";
  }
}

TEST(ThreadPool, RunsTasksOnAllItsWorkersAtOnce) {
  Worker worker;
  for (unsigned n : kSeveralThreads) {
    worker.reset();
    Region<I32> tids = worker.alloc<I32>(n);
    const Reply reply = worker.call("pool_meeting", {std::size_t{n}, output(tids, "thread ids")});
    ASSERT_CALL(reply) << n << " tasks on " << pool_of(n)
                       << ", each waiting for the others to start";
    const std::set<I32> threads = threads_in(tids);
    ASSERT_EQ(reply.value(1), n)
        << n << " tasks on " << pool_of(n) << ", each waiting until all " << n
        << " had started: after 10 s only " << reply.value(1)
        << " of them had seen the others start. They ran on " << threads.size()
        << " thread(s): the pool does not run its tasks at the same time on its " << n
        << " workers (tasks run on the submitting thread, or one worker takes every task?)";
    EXPECT_EQ(threads.size(), n) << "the " << n << " tasks ran on " << threads.size()
                                 << " threads, not on the pool's " << n << " workers";
    EXPECT_FALSE(threads.contains(static_cast<I32>(reply.value(0))))
        << "a task ran on the thread that submitted it: tasks belong on the workers";
  }
}

TEST(ThreadPool, FutureCarriesTheTaskException) {
  Worker worker;
  for (unsigned n : {1u, 3u}) {
    worker.reset();
    constexpr std::size_t kTasks = 50;
    Region<I32> outcomes = worker.alloc<I32>(kTasks), runs = worker.alloc<I32>(kTasks);
    const Reply reply = worker.call(
        "pool_exceptions", {std::size_t{n}, output(outcomes, "outcomes"), output(runs, "runs")});
    ASSERT_CALL(reply) << kTasks << " tasks, every fifth throwing, on " << pool_of(n);
    for (std::size_t t = 0; t < kTasks; ++t) {
      const I32 want = t % 5 == 2 ? 1 : 0, got = outcomes.data()[t];
      ASSERT_EQ(got, want) << "task " << t
                           << (want
                                   ? " threw std::runtime_error(\"task " + std::to_string(t) + "\")"
                                   : " returned normally")
                           << ", but get() on its future "
                           << (got == 0   ? "returned normally"
                               : got == 1 ? "rethrew that task's exception"
                                          : "threw something else")
                           << " (" << pool_of(n)
                           << "). The future of a task that threw must rethrow its exception "
                           << "(std::packaged_task stores it), and only that task's";
    }
    EXPECT_EQ(not_once(runs, "task"), "") << "with " << pool_of(n);
    EXPECT_EQ(reply.value(0), 10) << "after tasks threw, only " << reply.value(0)
                                  << " of 10 more tasks ran on " << pool_of(n)
                                  << ": a task's exception must not stop its worker";
  }
}

TEST(ThreadPool, TasksMaySubmitTasks) {
  Worker worker;
  for (unsigned n : {1u, 2u}) {
    worker.reset();
    Region<I32> runs = worker.alloc<I32>(100);
    ASSERT_CALL(worker.call("pool_chain", {std::size_t{n}, output(runs, "runs")}))
        << "a chain of 100 tasks on " << pool_of(n)
        << ", each submitting the next. A worker that holds the mutex "
        << "while it runs a task deadlocks here, when the task's submit() asks for the same mutex";
    EXPECT_EQ(not_once(runs, "task of the chain"), "") << "with " << pool_of(n);
  }
}

TEST(ThreadPool, DestructorFinishesEveryTask) {
  Worker worker;
  for (unsigned n : {1u, 3u}) {
    worker.reset();
    constexpr std::size_t kQueued = 100, kChain = 30;
    Region<I32> runs = worker.alloc<I32>(n + kQueued + kChain);
    ASSERT_CALL(worker.call("pool_drain", {std::size_t{n}, kQueued, output(runs, "runs")}))
        << "destroying " << pool_of(n) << " with " << kQueued << " tasks queued behind " << n
        << " busy ones and a chain of tasks that submit tasks";
    EXPECT_EQ(not_once(runs, "task"), "")
        << pool_of(n) << " was destroyed while its workers were busy (tasks 0 to " << n - 1
        << "), with tasks " << n << " to " << n + kQueued - 1 << " in its queue and tasks "
        << n + kQueued << " to " << runs.size() - 1
        << " a chain, each submitted by the one before: the destructor must let the workers "
           "finish every task already submitted, and any those submit (workers leave when the "
           "pool is stopping *and* the queue is empty)";
  }
}

TEST(ThreadPool, RejectsZeroThreads) {
  Worker worker;
  Region<float> x = worker.alloc<float>(16), y = worker.alloc<float>(16);
  Region<I32> runs = worker.alloc<I32>(1), tids = worker.alloc<I32>(1);
  const Reply reply = worker.call("pool_tasks", {0, 16, input(x, "x"), output(y, "y"),
                                                 output(runs, "runs"), output(tids, "thread ids")});
  EXPECT_EQ(reply.kind, "invalid_argument")
      << "ThreadPool(0) must throw std::invalid_argument; got: " << reply_text(reply);
}

// --- parallel_for --------------------------------------------------------------------------------

struct ForCase {
  std::size_t begin, end, grain;
};

// Calls parallel_for in the worker; runs, chunk_begin, chunk_end and tids are end elements long.
struct ForRecord {
  Region<I32> runs, chunk_begin, chunk_end, tids;
  Reply reply;
};
ForRecord run_parallel_for(Worker& worker, unsigned threads, ForCase c, bool meet) {
  ForRecord r{worker.alloc<I32>(c.end),
              worker.alloc<I32>(c.end, 3),
              worker.alloc<I32>(c.end, 5),
              worker.alloc<I32>(c.end, 7),
              {}};
  r.reply = worker.call("parallel_for",
                        {std::size_t{threads}, c.begin, c.end, c.grain, output(r.runs, "runs"),
                         output(r.chunk_begin, "chunk begins"), output(r.chunk_end, "chunk ends"),
                         output(r.tids, "thread ids"), meet ? 1 : 0});
  return r;
}

// "" when index i (in [begin, end)) was in the chunk [begin + k grain, min(begin + (k + 1) grain,
// end)).
std::string wrong_chunk(const ForRecord& r, ForCase c) {
  for (std::size_t i = c.begin; i < c.end; ++i) {
    const std::size_t b = c.begin + (i - c.begin) / c.grain * c.grain,
                      e = std::min(b + c.grain, c.end);
    const auto got_b = static_cast<std::size_t>(r.chunk_begin.data()[i]);
    const auto got_e = static_cast<std::size_t>(r.chunk_end.data()[i]);
    if (got_b != b || got_e != e)
      return "index " + std::to_string(i) + " was in the chunk [" + std::to_string(got_b) + ", " +
             std::to_string(got_e) + ") instead of [" + std::to_string(b) + ", " +
             std::to_string(e) + ")";
  }
  return "";
}

TEST(ParallelFor, EveryIndexInExactlyOneChunk) {
  // Empty ranges, one index, fewer indices than workers, grains that do not divide the size or
  // exceed it, ranges that do not start at 0; none of them the visible tests' cases.
  const ForCase cases[] = {
      {0, 0, 1},   {4, 4, 3},  {0, 1, 1},  {0, 2, 1},     {0, 3, 1},
      {0, 7, 2},   {0, 10, 4}, {0, 5, 9},  {2, 1001, 10}, {1, (1 << 16) + 3, 1000},
      {0, 999, 1}, {6, 13, 7}, {3, 4, 100}};
  Worker worker;
  for (unsigned n : kPoolSizes) {
    for (const ForCase& c : cases) {
      worker.reset();
      const ForRecord r = run_parallel_for(worker, n, c, false);
      const std::string what = "parallel_for over [" + std::to_string(c.begin) + ", " +
                               std::to_string(c.end) + ") in chunks of " + std::to_string(c.grain) +
                               " on " + pool_of(n);
      ASSERT_CALL(r.reply) << what;
      ASSERT_EQ(r.reply.value(2), 0)
          << what << ": body was called with a range outside [" << c.begin << ", " << c.end << ")";
      ASSERT_EQ(not_once(r.runs, "index", c.begin, c.end), "")
          << what << ": every index in exactly one chunk, "
          << "indices outside the range in none";
      ASSERT_EQ(wrong_chunk(r, c), "")
          << what << ": the chunks are [begin, begin + grain), [begin + grain, "
          << "begin + 2 grain), ..., the last one shorter";
    }
  }
}

TEST(ParallelFor, RunsChunksOnSeveralThreads) {
  Worker worker;
  const ForCase c{0, 64, 4};
  for (unsigned n : kSeveralThreads) {
    worker.reset();
    const ForRecord r = run_parallel_for(worker, n, c, true);
    ASSERT_CALL(r.reply) << "parallel_for over [0, 64) in chunks of 4 on " << pool_of(n);
    ASSERT_EQ(not_once(r.runs, "index"), "") << "with " << pool_of(n);
    ASSERT_EQ(r.reply.value(1), 1)
        << "parallel_for over 16 chunks on " << pool_of(n)
        << ", whose first chunk waits until another one has "
        << "started: no other chunk started within 10 s. The chunks ran one at a time, on "
        << threads_in(r.tids).size()
        << " thread(s): submit them to the pool so that its workers run them in parallel";
    EXPECT_GE(threads_in(r.tids).size(), 2u)
        << "the 16 chunks ran on one thread, with " << pool_of(n);
  }
}

TEST(ParallelFor, RethrowsTheLowestFailingChunkAfterRunningAll) {
  Worker worker;
  for (unsigned n : kPoolSizes) {
    worker.reset();
    Region<I32> runs = worker.alloc<I32>(100);
    const Reply reply =
        worker.call("parallel_for_exceptions", {std::size_t{n}, output(runs, "runs")});
    ASSERT_CALL(reply) << "parallel_for over 100 chunks, of which 30 and 70 throw, on "
                       << pool_of(n);
    const int thrown = static_cast<int>(reply.value(0));
    EXPECT_EQ(thrown, 30)
        << "chunk 70 threw at once, chunk 30 20 ms later, on " << pool_of(n) << "; parallel_for "
        << (thrown == -1   ? "returned normally: an exception in a chunk must reach the caller"
            : thrown == 70 ? "rethrew chunk 70's: rethrow the lowest-numbered chunk's exception "
                             "(get() the futures in chunk order), not the first in time"
                           : "threw something else than the chunk's own exception");
    EXPECT_EQ(not_once(runs, "chunk"), "")
        << "with " << pool_of(n)
        << ": every chunk must run once, even when others throw, and parallel_for "
           "returns (or throws) only after every chunk has finished";
  }
}

TEST(ParallelFor, NestedCallsDoNotDeadlock) {
  Worker worker;
  for (unsigned n : {1u, 2u, 3u}) {
    worker.reset();
    Region<I32> runs = worker.alloc<I32>(8 * 99);
    ASSERT_CALL(worker.call("parallel_for_nested", {std::size_t{n}, 7, output(runs, "runs")}))
        << "parallel_for called from inside a chunk of parallel_for on the same pool ("
        << pool_of(n)
        << "): a nested call must run its chunks in the calling thread (see "
           "is_worker_thread()), since waiting there for the other workers, who may all be doing "
           "the same, can wait forever";
    EXPECT_EQ(not_once(runs, "inner index"), "") << "nested parallel_for on " << pool_of(n);
  }
}

TEST(ParallelFor, RejectsZeroGrain) {
  Worker worker;
  const ForRecord r = run_parallel_for(worker, 2, {0, 10, 0}, false);
  EXPECT_EQ(r.reply.kind, "invalid_argument")
      << "parallel_for with grain 0 must throw std::invalid_argument; got: " << reply_text(r.reply);
}

// --- parallel_relu -------------------------------------------------------------------------------

::testing::AssertionResult relu_on(Worker& worker, unsigned threads, const std::vector<float>& x,
                                   std::size_t x_shift, std::size_t y_shift) {
  Region<float> xr = worker.alloc<float>(x.size(), x_shift),
                yr = worker.alloc<float>(x.size(), y_shift);
  put(xr, x);
  const Reply reply =
      worker.call("parallel_relu", {std::size_t{threads}, input(xr, "x"), output(yr, "y")});
  if (!reply.ok) return workbook::sealed::succeeded(reply);
  return workbook::testing::correct(lab03::oracle::check_relu(x, yr.copy()));
}

TEST(ParallelRelu, MatchesOracle) {
  auto rng = workbook::testing::rng();
  // Every tail of a SIMD width, fewer elements than workers, several chunks, and past the
  // streaming-store threshold (8 MiB), at sizes the visible tests do not use.
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 40; ++n) sizes.push_back(n);
  for (std::size_t n : {63, 65, 4099, 70001, (1 << 19) + 9, (5 << 19) + 3}) sizes.push_back(n);
  Worker worker;
  for (unsigned threads : kPoolSizes) {
    for (std::size_t n : sizes) {
      worker.reset();
      ASSERT_TRUE(
          relu_on(worker, threads, values(workbook::normal(n, rng)), n * 3 % 16, (n * 5 + 1) % 16))
          << "n = " << n << ", " << pool_of(threads);
    }
  }
}

TEST(ParallelRelu, SpecialValues) {
  auto rng = workbook::testing::rng();
  Worker worker;
  EXPECT_TRUE(relu_on(worker, 3, values(workbook::adversarial(200003, rng)), 0, 5));
}

TEST(ParallelRelu, InPlace) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> x = values(workbook::normal((1 << 18) + 7, rng));
  Region<float> xy = worker.alloc<float>(x.size(), 5);
  put(xy, x);
  ASSERT_CALL(worker.call("parallel_relu", {2, input(xy, "x"), input(xy, "y (the same buffer)")}));
  EXPECT_CORRECT(lab03::oracle::check_relu(x, xy.copy())) << "in place (y is x)";
}

TEST(ParallelRelu, LeavesInputUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> x = values(workbook::adversarial(100003, rng));
  Region<float> xr = worker.alloc<float>(x.size()), yr = worker.alloc<float>(x.size());
  put(xr, x);
  ASSERT_CALL(worker.call("parallel_relu", {2, input(xr, "x"), output(yr, "y")}));
  EXPECT_CORRECT(
      workbook::check_unchanged(x, xr.span(), lab03::oracle::where("parallel_relu"), "x"));
  EXPECT_CORRECT(lab03::oracle::check_relu(x, yr.copy()));
}

TEST(ParallelRelu, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  constexpr std::size_t n = 77777;
  Region<float> xr = worker.alloc<float>(n), yr = worker.alloc<float>(n);
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> x = values(workbook::normal(n, rng));
    put(xr, x);
    ASSERT_CALL(worker.call("parallel_relu", {2, input(xr, "x"), output(yr, "y")}));
    ASSERT_CORRECT(lab03::oracle::check_relu(x, yr.copy()))
        << "call " << round + 1
        << " on the same buffers with new values: a result kept from an earlier call?";
  }
}

TEST(ParallelRelu, RejectsMismatchedSizes) {
  Worker worker;
  Region<float> x = worker.alloc<float>(10), y = worker.alloc<float>(9);
  const Reply reply = worker.call("parallel_relu", {2, input(x, "x"), output(y, "y")});
  EXPECT_EQ(reply.kind, "invalid_argument")
      << "parallel_relu(x of 10, y of 9) must throw std::invalid_argument; got: "
      << reply_text(reply);
}

// --- process_batch -------------------------------------------------------------------------------

// A batch as the worker receives it: the tensors' sizes and their values end to end. Every tensor
// differs from the others (the worker tells them apart by their values if a submission copies
// them); at most one is empty.
struct Batch {
  std::vector<Tensor> tensors;
  std::vector<I32> sizes;
  std::vector<float> values;
};
Batch make_batch(std::size_t count, std::size_t max_size, workbook::Rng& rng) {
  Batch b;
  b.tensors = lab03::ops::make_batch(count, 1, max_size, rng);
  if (count > 3) b.tensors[3] = Tensor(Tensor::shape_type{0});
  for (const Tensor& t : b.tensors) {
    b.sizes.push_back(static_cast<I32>(t.size()));
    b.values.insert(b.values.end(), t.begin(), t.end());
  }
  return b;
}

// The regions of one call of process_batch, and its results read back.
struct BatchCall {
  Region<I32> sizes, result_sizes, runs, tids;
  Region<float> values, results, after;
  Reply reply;

  BatchCall(Worker& worker, const Batch& b)
      : sizes(worker.alloc<I32>(b.sizes.size())),
        result_sizes(worker.alloc<I32>(b.sizes.size(), 1)),
        runs(worker.alloc<I32>(b.sizes.size(), 2)),
        tids(worker.alloc<I32>(b.sizes.size(), 3)),
        values(worker.alloc<float>(b.values.size(), 1)),
        results(worker.alloc<float>(b.values.size(), 2)),
        after(worker.alloc<float>(b.values.size(), 3)) {}

  Reply& run(Worker& worker, unsigned threads, const Batch& b, int mode) {
    std::copy(b.sizes.begin(), b.sizes.end(), sizes.data());
    put(values, b.values);
    reply = worker.call(
        "process_batch",
        {std::size_t{threads}, input(sizes, "sizes"), input(values, "values"),
         output(results, "results"), output(result_sizes, "result sizes"), output(runs, "runs"),
         output(tids, "thread ids"), output(after, "batch after"), mode});
    return reply;
  }

  // What process_batch returned, rebuilt from the shared memory.
  std::vector<Tensor> returned() const {
    const auto count = static_cast<std::size_t>(reply.value(0));
    std::vector<Tensor> out(count);
    std::size_t at = 0;
    for (std::size_t i = 0; i < std::min(count, result_sizes.size()); ++i) {
      const auto n = static_cast<std::size_t>(std::max<I32>(result_sizes.data()[i], 0));
      if (at + n > results.size()) break;
      out[i] = Tensor(Tensor::shape_type{n});
      std::copy_n(results.data() + at, n, out[i].data());
      at += n;
    }
    return out;
  }
};

::testing::AssertionResult batch_correct(const BatchCall& call, const Batch& b) {
  return workbook::testing::correct(lab03::oracle::check_batch(
      call.returned(), lab03::oracle::serial(b.tensors, lab03::ops::polynomial)));
}

TEST(ProcessBatch, MatchesOracle) {
  struct Case {
    std::size_t count, max_size;
  };
  // An empty batch, one tensor, fewer tensors than workers, uneven tensors, many small ones.
  const Case cases[] = {{0, 1}, {1, 100}, {3, 5000}, {40, 3000}, {300, 64}};
  auto rng = workbook::testing::rng();
  Worker worker;
  for (unsigned n : kPoolSizes) {
    for (const Case& c : cases) {
      worker.reset();
      const Batch b = make_batch(c.count, c.max_size, rng);
      BatchCall call(worker, b);
      const std::string what =
          "process_batch of " + std::to_string(c.count) + " tensors on " + pool_of(n);
      ASSERT_CALL(call.run(worker, n, b, 0)) << what;
      ASSERT_TRUE(batch_correct(call, b)) << what;
      EXPECT_EQ(call.reply.value(2), 0)
          << what << ": op was called with a tensor that is not one of the batch";
      EXPECT_EQ(not_once(call.runs, "op for tensor"), "")
          << what << ": op is called exactly once per tensor";
    }
  }
}

TEST(ProcessBatch, RunsTensorsOnSeveralThreads) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (unsigned n : kSeveralThreads) {
    worker.reset();
    const Batch b = make_batch(64, 500, rng);
    BatchCall call(worker, b);
    ASSERT_CALL(call.run(worker, n, b, 1)) << "process_batch of 64 tensors on " << pool_of(n);
    ASSERT_TRUE(batch_correct(call, b)) << "process_batch of 64 tensors on " << pool_of(n);
    ASSERT_EQ(not_once(call.runs, "op for tensor"), "") << "with " << pool_of(n);
    const std::set<I32> threads = threads_in(call.tids);
    ASSERT_EQ(call.reply.value(3), 1)
        << "process_batch of 64 tensors on " << pool_of(n)
        << ", whose first call of op waits until another one has "
        << "started: no other call started within 10 s. The tensors were processed one at a "
        << "time, on " << threads.size()
        << " thread(s): process them in parallel on the pool (parallel_for)";
    EXPECT_GE(threads.size(), 2u) << "the 64 tensors were processed on one thread, with "
                                  << pool_of(n);
  }
}

TEST(ProcessBatch, RethrowsTheLowestFailingTensorAfterProcessingAll) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const Batch b = make_batch(20, 100, rng);
  BatchCall call(worker, b);
  ASSERT_CALL(call.run(worker, 3, b, 2))
      << "process_batch of 20 tensors whose op throws for tensors 4 and 9";
  const int thrown = static_cast<int>(call.reply.value(4));
  EXPECT_EQ(thrown, 4)
      << "op threw for tensor 9 at once and for tensor 4 20 ms later; process_batch "
      << (thrown == -1  ? "returned normally: the exception must reach the caller"
          : thrown == 9 ? "rethrew tensor 9's: rethrow the lowest-numbered tensor's exception, not "
                          "the first in time"
                        : "threw something else than op's own exception");
  EXPECT_EQ(not_once(call.runs, "op for tensor"), "")
      << "every tensor must be processed, even when op throws for some";
}

TEST(ProcessBatch, LeavesInputsUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const Batch b = make_batch(24, 4000, rng);
  BatchCall call(worker, b);
  ASSERT_CALL(call.run(worker, 2, b, 0));
  EXPECT_CORRECT(workbook::check_unchanged(b.values, call.after.span(),
                                           lab03::oracle::where("process_batch"),
                                           "batch (its tensors' values, end to end)"));
  EXPECT_TRUE(batch_correct(call, b));
}

TEST(ProcessBatch, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Batch b = make_batch(12, 3000, rng);
  BatchCall call(worker, b);
  for (int round = 0; round < 3; ++round) {
    // The same tensors (the worker keeps them), new values.
    b.values.clear();
    for (Tensor& t : b.tensors) {
      workbook::fill_uniform(std::span<float>(t.data(), t.size()), rng);
      b.values.insert(b.values.end(), t.begin(), t.end());
    }
    ASSERT_CALL(call.run(worker, 2, b, 0));
    ASSERT_TRUE(batch_correct(call, b))
        << "call " << round + 1
        << " on the same tensors with new values: a result kept from an earlier call?";
  }
}

}  // namespace
