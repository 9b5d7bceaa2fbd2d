// Lab 03 performance spec: what each perf test times, the work the roofline counts, and advice.
// `ctest --preset lab03 -L perf` compares your code with the reference, interleaved; run
// `build/lab03/labs/03_thread_pool/lab03_perf` to time yours alone against the ceilings.
//
// Each case uses a pool with one thread per logical CPU and is judged against the all-thread roofs
// (Work::threads), and also times your code on a pool of one thread, for the speedup. The cases
// call parallel_relu and process_batch through perf.timed(...): here that is yours (or the
// reference's); the lab's bench times the handout's earlier versions in its place, on the same
// inputs.
#include "thread_pool.hpp"

#include "batch_ops.hpp"
#include "perf_evidence.hpp"
#include "relu_chunk.hpp"
#include "thread_pool_oracle.hpp"
#include "threads.hpp"

#include <workbook/buffer.hpp>
#include <workbook/format.hpp>
#include <workbook/perf.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace {

using workbook::AlignedVector;
using workbook::GuardedBuffer;
using workbook::Traffic;
using workbook::perf::Extra;

unsigned threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string threads_text(unsigned threads) {
  return std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

// The best of two calls, in seconds.
double seconds_of(const std::function<void()>& call) {
  double best = 1e30;
  for (int i = 0; i < 2; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// The evidence the advice rests on (perf_evidence.hpp): one call watched from another thread (the
// threads started), how many chunks of parallel_for run at once, and the call timed on `pool` and
// on a pool of one thread. Not
// the measurement, which the harness makes; run_on_one empty: only the threads started count.
lab03::evidence::Call observe(lab03::ThreadPool& pool, const std::function<void()>& run,
                              const std::function<void()>& run_on_one) {
  lab03::evidence::Call call{.threads_started = lab03::threads::watch_call(run).started.size()};
  if (run_on_one) {
    call.workers = pool.size();
    const lab03::evidence::Chunks chunks = lab03::evidence::chunks_at_once(pool);
    call.at_once = chunks.at_once;
    call.all_on_caller = chunks.all_on_caller;
    call.seconds = seconds_of(run);
    call.one_thread = seconds_of(run_on_one);
  }
  return call;
}

void add_hints(workbook::perf::Case& perf, const lab03::evidence::Call& call,
               const lab03::evidence::About& about) {
  for (const workbook::Hint& h : lab03::evidence::hints(call, about)) perf.hint(h.below, h.text);
}

// The same work on one thread, for the speedup (see workbook::perf::Extra).
workbook::Work on_one_thread(workbook::Work work) {
  work.threads = 1;
  return work;
}

// Memory bound: ReLU moves 8 bytes per operation. Its roof is the copy bandwidth of all cores
// together, which on most machines is well short of one core's bandwidth times the cores.
void parallel_relu(workbook::perf::Case& perf) {
  constexpr std::size_t n = std::size_t{64} << 20;  // 64 Mi floats: 256 MiB in, 256 MiB out
  lab03::ThreadPool pool(threads()), one(1);
  AlignedVector<float> x(n);
  workbook::fill_uniform(x, perf.rng());
  GuardedBuffer<float> y(n);
  const auto parallel_relu = perf.timed(lab03::parallel_relu);
  perf.describe("parallel_relu",
                "ReLU of 64 Mi floats, 256 MiB in and out, " + threads_text(pool.size()));
  const workbook::Work work{
      .ops = double(n), .bytes = 8.0 * n, .traffic = Traffic::copy, .threads = pool.size()};
  perf.work(work);
  lab03::evidence::Call call = observe(
      pool, [&] { parallel_relu(pool, x, y.span()); }, [&] { parallel_relu(one, x, y.span()); });
  // Which stores a call on one thread matches (see perf_evidence.hpp).
  call.ordinary_one = seconds_of([&] { lab03::relu_chunk(x, y.span(), lab03::Stores::ordinary); });
  call.streaming_one =
      seconds_of([&] { lab03::relu_chunk(x, y.span(), lab03::Stores::streaming); });
  add_hints(perf, call,
            {.function = "parallel_relu",
             .roof = "the all-core copy roof",
             .own_speed = "chunks of at least 64 Ki floats, each by relu_chunk, on borders that "
                          "are multiples of 16 floats (64-byte lines); streaming stores for the "
                          "whole output (stores_for(y.size_bytes()), decided once, not per "
                          "chunk); a few chunks per worker rather than hundreds."});
  perf.extra({.label = "your parallel_relu, 1 thread",
              .side = Extra::Side::yours,
              .run = [&] { parallel_relu(one, x, y.span()); },
              .work = on_one_thread(work)});
  perf.measure({.run = [&] { parallel_relu(pool, x, y.span()); },
                .poison = [&] { y.poison(); },
                .verify = [&] { return lab03::oracle::check_relu(x, y); },
                .output = workbook::perf::output_of(y, workbook::Tolerance::exact())});
}
WORKBOOK_PERF_CASE(parallel_relu);

// Compute bound: 128 FLOP per element for 8 bytes moved. Its roof is the FMA peak of all cores,
// which grows with the cores: the speedup should come close to the number of threads.
void process_batch(workbook::perf::Case& perf) {
  lab03::ops::keep_freed_memory();  // time the arithmetic, not page faults (see there)
  lab03::ThreadPool pool(threads()), one(1);
  // 64 tensors of 32 Ki to 96 Ki floats: uneven, as real batches are, so that a pool that hands
  // out work as workers free up balances better than a fixed split.
  const std::vector<lab03::Tensor> batch =
      lab03::ops::make_batch(64, 32 << 10, 96 << 10, perf.rng());
  const std::vector<lab03::Tensor> expected = lab03::oracle::serial(batch, lab03::ops::polynomial);
  const double n = double(lab03::ops::elements(batch));
  std::vector<lab03::Tensor> results;
  const auto process_batch = perf.timed(lab03::process_batch);
  perf.describe("process_batch", "polynomial of degree 64 on 64 tensors (" +
                                     workbook::format_fixed(n / (1 << 20), 1) + " Mi floats), " +
                                     threads_text(pool.size()));
  const workbook::Work work{.ops = lab03::ops::kFlopsPerElement * n,
                            .bytes = 8.0 * n,
                            .traffic = Traffic::copy,
                            .threads = pool.size()};
  perf.work(work);
  add_hints(perf,
            observe(
                pool, [&] { results = process_batch(pool, batch, lab03::ops::polynomial); },
                [&] { results = process_batch(one, batch, lab03::ops::polynomial); }),
            {.function = "process_batch",
             .roof = "the all-core FMA peak",
             .own_speed = "each worker should always have a tensor to work on: hand out work one "
                          "tensor (or a few) at a time, so that uneven tensors even out, rather "
                          "than a fixed split into equal shares."});
  perf.extra({.label = "your process_batch, 1 thread",
              .side = Extra::Side::yours,
              .run = [&] { results = process_batch(one, batch, lab03::ops::polynomial); },
              .work = on_one_thread(work)});
  // The output, for the driver's check of a timed call: the results one after the other, exact
  // (check_batch asks for the same bits). A missing or misshapen result leaves its place poisoned.
  const workbook::perf::Output output{
      .element = workbook::perf::Element::f32,
      .count = lab03::ops::elements(expected),
      .copy = [&](std::span<std::byte> to) {
        const std::span<float> all(reinterpret_cast<float*>(to.data()), to.size() / sizeof(float));
        std::fill(all.begin(), all.end(), workbook::Poison<float>::value());
        std::size_t at = 0;
        for (std::size_t t = 0; t < expected.size(); ++t) {
          if (t < results.size() && results[t].size() == expected[t].size())
            std::copy_n(results[t].data(), results[t].size(),
                        all.begin() + static_cast<std::ptrdiff_t>(at));
          at += expected[t].size();
        }
      }};
  perf.measure({.run = [&] { results = process_batch(pool, batch, lab03::ops::polynomial); },
                .poison = [&] { results.clear(); },
                .verify = [&] { return lab03::oracle::check_batch(results, expected); },
                .output = output});
}
WORKBOOK_PERF_CASE(process_batch);

// Overhead bound: 16384 tasks of 256 floats each, about 50 ns of work apiece, so the time is nearly
// all the pool's own: a lock, a queue push and pop, a wake-up, a future.
void submit(workbook::perf::Case& perf) {
  constexpr std::size_t kTasks = 16384, kPerTask = 256, n = kTasks * kPerTask;
  lab03::ThreadPool pool(threads());
  AlignedVector<float> x(n);
  workbook::fill_uniform(x, perf.rng());
  GuardedBuffer<float> y(n);
  std::vector<std::future<void>> done;
  done.reserve(kTasks);
  perf.describe("submit", "16384 tasks of 256 floats each, submitted and waited for, " +
                              threads_text(pool.size()));
  perf.work({.ops = double(n), .bytes = 8.0 * n, .traffic = Traffic::copy, .threads = pool.size()});
  perf.per_item(kTasks, "task");
  const auto run = [&] {
    const std::span<const float> in(x);
    const std::span<float> out = y.span();
    for (std::size_t t = 0; t < kTasks; ++t)
      done.push_back(pool.submit([in, out, t] {
        lab03::relu_chunk(in.subspan(t * kPerTask, kPerTask), out.subspan(t * kPerTask, kPerTask),
                          lab03::Stores::ordinary);
      }));
    for (std::future<void>& f : done) f.get();
    done.clear();
  };
  const lab03::evidence::Call call = observe(pool, run, {});
  if (call.threads_started > 0)
    add_hints(perf, call, {.function = "submit"});
  else
    perf.hint(1.01,
              "Here the pool's overhead per task binds, not memory: see the time per task. If "
              "yours is well above the reference's: wake one worker per task (notify_one, after "
              "unlocking), hold the mutex only to push or pop, and never sleep or poll in a "
              "loop.");
  perf.measure({.run = run,
                .poison = [&] { y.poison(); },
                .verify = [&] { return lab03::oracle::check_relu(x, y, "submit"); },
                .output = workbook::perf::output_of(y, workbook::Tolerance::exact())});
}
WORKBOOK_PERF_CASE(submit);

}  // namespace
