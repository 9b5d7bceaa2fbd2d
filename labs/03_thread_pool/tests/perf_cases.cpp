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
#include "relu_chunk.hpp"
#include "thread_pool_oracle.hpp"

#include <workbook/buffer.hpp>
#include <workbook/format.hpp>
#include <workbook/perf.hpp>

#include <algorithm>
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
  perf.hint(
      0.5,
      "Far below the all-core copy roof. Do the chunks run on different workers at the same time "
      "(see the speedup line)? A speedup near 1 means they do not: a future waited for right "
      "after its submit (submit(...).get() inside the loop) runs the chunks one at a time; "
      "submit them all, then wait. Chunks of at least 64 Ki floats, so that the overhead of a "
      "task is small next to its work.");
  perf.hint(
      0.85,
      "Close, but short of the all-core copy roof: streaming stores for the whole output "
      "(stores_for(y.size_bytes()), decided once, not per chunk), chunk borders on multiples of "
      "16 floats (64-byte lines), and a few chunks per worker rather than hundreds.");
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
  perf.hint(
      0.4,
      "Far below the all-core FMA peak: are the tensors processed on all workers at once? Compare "
      "with the speedup line; a pool whose workers wait for each other (a task run while the "
      "mutex is held), or a loop that waits for each task before submitting the next, is no "
      "faster than one thread. Starting threads in the call (a std::thread or std::async per "
      "call or per tensor) instead of using the pool's workers costs about 20 us a thread: "
      "submit to the pool.");
  perf.hint(
      0.7,
      "Each worker should always have a tensor to work on: hand out work one tensor (or a few) "
      "at a time, so that uneven tensors even out, and avoid a fixed split into equal halves. "
      "A thread started per tensor or per call (std::thread, std::async) instead of a task for "
      "the pool's workers costs about 20 us each, a good part of a tensor's time here.");
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
  perf.hint(
      1.01,
      "Here the pool's overhead per task binds, not memory: see the time per task. If yours "
      "is well above the reference's: wake one worker per task (notify_one, after unlocking), "
      "hold the mutex only to push or pop, and never sleep or poll in a loop. Tens of "
      "microseconds per task means a thread started per task (std::thread, std::async) instead "
      "of a task queued for the pool's workers.");
  perf.measure({.run =
                    [&] {
                      const std::span<const float> in(x);
                      const std::span<float> out = y.span();
                      for (std::size_t t = 0; t < kTasks; ++t)
                        done.push_back(pool.submit([in, out, t] {
                          lab03::relu_chunk(in.subspan(t * kPerTask, kPerTask),
                                            out.subspan(t * kPerTask, kPerTask),
                                            lab03::Stores::ordinary);
                        }));
                      for (std::future<void>& f : done) f.get();
                      done.clear();
                    },
                .poison = [&] { y.poison(); },
                .verify = [&] { return lab03::oracle::check_relu(x, y, "submit"); },
                .output = workbook::perf::output_of(y, workbook::Tolerance::exact())});
}
WORKBOOK_PERF_CASE(submit);

}  // namespace
