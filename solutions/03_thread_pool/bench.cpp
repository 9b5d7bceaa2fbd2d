// Lab 03 bench: the lab's perf cases (labs/03_thread_pool/tests/perf_cases.cpp: sizes, inputs,
// work models) timed with the reference's earlier versions and OpenMP's `parallel for` in its
// place, against this machine's measured ceilings, all in one run: the speedups, the memory-bound
// ReLU against the all-core copy roof; then the bench's own overheads of a task, a chunk, a call.
// Run: cmake --workflow --preset bench (it prints the tables and writes JSON and a plot), or
// `lab03_bench --markdown` for the handout's table.
#include "thread_pool.hpp"
#include "versions.hpp"

#include "batch_ops.hpp"
#include "relu_chunk.hpp"
#include "thread_pool_oracle.hpp"

#include <workbook/bench.hpp>
#include <workbook/ceilings.hpp>
#include <workbook/report.hpp>
#include <workbook/timing.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <iostream>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>
#include <nlohmann/json.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

namespace v = lab03::versions;
using lab03::Range;
using lab03::Tensor;
using lab03::TensorOp;
using lab03::ThreadPool;
using workbook::Bench;

// Keeps the compiler from deleting an empty loop body: the overhead rows time nothing but the
// machinery around it.
inline void nothing() {
  asm volatile("" ::: "memory");
}

// The reference's grain for 64 Mi floats, which the pool's variants and OpenMP use too.
constexpr std::size_t kChunk = std::size_t{1} << 20;

std::string format_us(double seconds) {
  return workbook::format_fixed(seconds * 1e6, 2) + " us";
}

}  // namespace

int main(int argc, char** argv) {
#if defined(_OPENMP)
  // OpenMP's threads spin for a while after each parallel region, by default, taking a core from
  // whatever runs next: here, the other versions, which are timed interleaved with it. The pool's
  // workers sleep when idle; so shall OpenMP's. libgomp reads the setting once, when the program
  // starts: set it, and start again. (Set OMP_WAIT_POLICY yourself to time the spinning kind.)
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);  // returns only if it failed: then go on as we are
  }
  // As many threads as the pools of the perf cases: one per logical CPU.
  omp_set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
#endif
  workbook::LabBench bench("lab03");
  std::vector<
      workbook::LabBench::Version<void(ThreadPool&, std::span<const float>, std::span<float>)>>
      relu = {{"1 thread: relu_chunk, streaming stores",
               [](ThreadPool&, std::span<const float> in, std::span<float> out) {
                 lab03::relu_chunk(in, out, lab03::Stores::streaming);
               }},
              {"v1 threads started per call",
               [](ThreadPool& pool, std::span<const float> in, std::span<float> out) {
                 v::parallel_relu_v1_threads(pool.size(), in, out);
               }},
              {"pool, ordinary stores",
               [](ThreadPool& pool, std::span<const float> in, std::span<float> out) {
                 v::parallel_relu_with(pool, in, out, kChunk, lab03::Stores::ordinary);
               }},
              {"pool, chunks of 4 Ki floats",
               [](ThreadPool& pool, std::span<const float> in, std::span<float> out) {
                 v::parallel_relu_with(pool, in, out, 4096, lab03::Stores::streaming);
               }},
              {"pool, one chunk per worker",
               [](ThreadPool& pool, std::span<const float> in, std::span<float> out) {
                 v::parallel_relu_with(pool, in, out, (in.size() / pool.size() + 15) / 16 * 16,
                                       lab03::Stores::streaming);
               }},
              {"copy, the probe's kernel on the pool",
               [](ThreadPool& pool, std::span<const float> in, std::span<float> out) {
                 lab03::parallel_for(pool, {0, in.size()}, kChunk, [&](Range r) {
                   workbook::copy_streaming(in.subspan(r.begin, r.size()),
                                            out.subspan(r.begin, r.size()));
                 });
               },
               workbook::kBaseline}};
#if defined(_OPENMP)
  relu.push_back({.label = "OpenMP parallel for, static, same chunks",
                  .function =
                      [](ThreadPool&, std::span<const float> in, std::span<float> out) {
                        const long chunks = static_cast<long>((in.size() + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
                        for (long k = 0; k < chunks; ++k) {
                          const std::size_t begin = static_cast<std::size_t>(k) * kChunk;
                          const std::size_t size = std::min(kChunk, in.size() - begin);
                          lab03::relu_chunk(in.subspan(begin, size), out.subspan(begin, size),
                                            lab03::Stores::streaming);
                        }
                      },
                  .library = true});
#endif
  bench.versions(lab03::parallel_relu, "reference: pool, 1 Mi-float chunks, streaming",
                 std::move(relu));

  std::vector<workbook::LabBench::Version<std::vector<Tensor>(ThreadPool&, std::span<const Tensor>,
                                                              const TensorOp&)>>
      batch = {{"1 thread: a loop over the batch",
                [](ThreadPool&, std::span<const Tensor> tensors, const TensorOp& op) {
                  return lab03::oracle::serial(tensors, op);
                }},
               {"v2 one task per tensor", v::process_batch_v2_task_per_tensor}};
#if defined(_OPENMP)
  batch.push_back({.label = "OpenMP parallel for, dynamic, 1 tensor",
                   .function =
                       [](ThreadPool&, std::span<const Tensor> tensors, const TensorOp& op) {
                         std::vector<Tensor> results(tensors.size());
                         const long count = static_cast<long>(tensors.size());
#pragma omp parallel for schedule(dynamic, 1)
                         for (long i = 0; i < count; ++i) results[i] = op(tensors[i]);
                         return results;
                       },
                   .library = true});
#endif
  bench.versions(lab03::process_batch, "reference: chunks claimed from per-thread counters",
                 std::move(batch));

  return bench.main(argc, argv, {}, [](const Bench& bench, const workbook::BenchOptions& options) {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    ThreadPool pool(threads);
    const workbook::TimingOptions timing{.max_seconds = options.max_seconds};
    const std::filesystem::path& results = options.results;
    const std::string on_all = std::to_string(threads) + " threads";
    // --- Overhead: what a task, a chunk or a call costs when the work itself is nothing
    // -------------- Not a roofline matter (no bytes, no operations): timed interleaved all the
    // same, and shown per item.
    struct Overhead {
      std::string label;
      double items;  // per call
      std::string item;
      std::function<void()> run;
    };
    constexpr std::size_t kTasks = 16384;
    const auto empty = [](Range) { nothing(); };
    std::vector<std::future<void>> futures;
    futures.reserve(kTasks);
    std::vector<Overhead> overheads = {
        {"std::jthread started and joined, " + on_all, double(threads), "thread",
         [&] {
           std::vector<std::jthread> team;
           for (unsigned t = 0; t < threads; ++t) team.emplace_back(nothing);
         }},
        {"submit + get, one task at a time (round trip)", 256, "task",
         [&] {
           for (int i = 0; i < 256; ++i) pool.submit(nothing).get();
         }},
        {"submit 16384 tasks, then get them all (the reference pool)", double(kTasks), "task",
         [&] {
           for (std::size_t i = 0; i < kTasks; ++i) futures.push_back(pool.submit(nothing));
           for (std::future<void>& f : futures) f.get();
           futures.clear();
         }},
        {"parallel_for v2, 16384 chunks of one task each", double(kTasks), "chunk",
         [&] {
           v::parallel_for_v2_task_per_chunk(pool, {0, kTasks}, 1, empty);
         }},
        {"parallel_for reference, 16384 chunks claimed from per-thread counters", double(kTasks),
         "chunk",
         [&] {
           lab03::parallel_for(pool, {0, kTasks}, 1, empty);
         }},
        {"parallel_for reference, one chunk per worker (fork-join)", 1, "call",
         [&] {
           lab03::parallel_for(pool, {0, threads}, 1, empty);
         }},
    };
    // False sharing: each worker increments its own counter, the counters 8 bytes apart (one cache
    // line for all) or 64 bytes apart (a line each). Through a volatile pointer, so that every
    // increment is a load and a store to memory, as a shared statistics counter would be.
    constexpr std::size_t kIncrements = 1 << 20;
    struct alignas(64) Padded {
      std::uint64_t value;
    };
    std::vector<std::uint64_t> adjacent(threads);
    std::vector<Padded> padded(threads);
    auto count_up = [](volatile std::uint64_t* counter) {
      for (std::size_t i = 0; i < kIncrements; ++i) *counter = *counter + 1;
    };
    overheads.push_back(
        {"false sharing: counters 8 bytes apart, " + on_all, double(kIncrements), "increment", [&] {
           lab03::parallel_for(pool, {0, threads}, 1,
                               [&](Range r) { count_up(&adjacent[r.begin]); });
         }});
    overheads.push_back(
        {"no false sharing: counters 64 bytes apart", double(kIncrements), "increment", [&] {
           lab03::parallel_for(pool, {0, threads}, 1,
                               [&](Range r) { count_up(&padded[r.begin].value); });
         }});
#if defined(_OPENMP)
    overheads.push_back(
        {"OpenMP parallel for, dynamic,1, 16384 iterations", double(kTasks), "iteration", [] {
           const long count = static_cast<long>(kTasks);
#pragma omp parallel for schedule(dynamic, 1)
           for (long i = 0; i < count; ++i) nothing();
         }});
    overheads.push_back({"OpenMP parallel region (fork-join)", 1, "call", [] {
#pragma omp parallel
                           nothing();
                         }});
#endif
    std::cerr << "  overheads: timing " << overheads.size() << " kinds ..." << std::endl;
    std::vector<workbook::BatchRunner> runners;
    for (const Overhead& o : overheads) runners.push_back(workbook::local_runner(o.run));
    const std::vector<workbook::Timing> timings = workbook::time_interleaved(runners, timing);
    workbook::Table table({"overhead of", "per item", "spread", "per call"});
    nlohmann::json records = nlohmann::json::array();
    double task_overhead = 0;
    for (std::size_t k = 0; k < overheads.size(); ++k) {
      const workbook::Summary& s = timings[k].summary;
      const double per_item = s.median / overheads[k].items;
      if (k == 2) task_overhead = per_item;
      table.add(
          {overheads[k].label, workbook::format_seconds(per_item) + " per " + overheads[k].item,
           "+-" + workbook::format_percent(s.rel_iqr() / 2), workbook::format_seconds(s.median)});
      records.push_back({{"label", overheads[k].label},
                         {"item", overheads[k].item},
                         {"items_per_call", overheads[k].items},
                         {"seconds_per_item", per_item},
                         {"timing", workbook::to_json(s)}});
    }

    // In Markdown the handout's table alone goes to stdout; these lines, to stderr.
    std::ostream& out = options.markdown ? std::cerr : std::cout;
    out << "\nlab03 overheads (" << on_all << ", interleaved):\n" << table.str();
    nlohmann::json summary = {{"threads", threads}, {"task_overhead_seconds", task_overhead}};
    // The targets, from the rows of the cases' table: only when both cases were timed (a bench
    // asked for one case, `lab03_bench parallel_relu`, has no row of the other).
    const char* const kRelu = "reference: pool, 1 Mi-float chunks, streaming";
    const char* const kBatch = "reference: chunks claimed from per-thread counters";
    if (!bench.has("parallel_relu", kRelu) || !bench.has("process_batch", kBatch)) {
      out << "\nlab03 against its targets: needs both cases, parallel_relu and process_batch\n";
    } else {
      const workbook::Ceilings& c = bench.ceilings();
      const workbook::Analysis& relu_reference = bench.analysis("parallel_relu", kRelu);
      const double relu_reference_gbs = relu_reference.gbs, relu_seconds = relu_reference.seconds;
      const double relu_1t_seconds =
          bench.analysis("parallel_relu", "1 thread: relu_chunk, streaming stores").seconds;
      const double batch_seconds = bench.analysis("process_batch", kBatch).seconds;
      const double batch_1t_seconds =
          bench.analysis("process_batch", "1 thread: a loop over the batch").seconds;
#if defined(_OPENMP)
      const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
      const double relu_omp_seconds =
          bench.analysis("parallel_relu", "OpenMP parallel for, static, same chunks").seconds;
      const double batch_omp_seconds =
          bench.analysis("process_batch", "OpenMP parallel for, dynamic, 1 tensor").seconds;
#endif
      summary["relu_fraction_of_copy_all"] = relu_reference_gbs / c.copy_all_gbs;
      summary["relu_speedup"] = relu_1t_seconds / relu_seconds;
      summary["batch_speedup"] = batch_1t_seconds / batch_seconds;
      out << "\nlab03 against its targets (" << on_all << "):\n"
          << "  process_batch (compute bound): speedup "
          << workbook::format_fixed(batch_1t_seconds / batch_seconds, 2)
          << "x over one thread, parallel efficiency "
          << workbook::format_percent(batch_1t_seconds / batch_seconds / threads)
          << " (target: 1.8x on 2 threads)\n"
          << "  parallel_relu (memory bound): " << workbook::format_fixed(relu_reference_gbs)
          << " GB/s, " << workbook::format_percent(relu_reference_gbs / c.copy_all_gbs)
          << " of the all-core copy roof (" << workbook::format_fixed(c.copy_all_gbs)
          << " GB/s; target 90%), speedup "
          << workbook::format_fixed(relu_1t_seconds / relu_seconds, 2) << "x over one thread\n"
          << "  task overhead: " << format_us(task_overhead)
          << " per task, submitted in a stream (target < 5 us)\n";
#if defined(_OPENMP)
      summary["openmp_wait_policy"] = wait_policy ? wait_policy : "";
      summary["relu_openmp_over_reference"] = relu_omp_seconds / relu_seconds;
      summary["batch_openmp_over_reference"] = batch_omp_seconds / batch_seconds;
      out << "  OpenMP (OMP_WAIT_POLICY=" << (wait_policy ? wait_policy : "")
          << "), time over the reference's: "
          << "parallel_relu " << workbook::format_fixed(relu_omp_seconds / relu_seconds, 2)
          << "x, process_batch " << workbook::format_fixed(batch_omp_seconds / batch_seconds, 2)
          << "x\n";
#endif
    }
    workbook::write_file(
        results / "bench" / "lab03_overheads.json",
        nlohmann::json{{"overheads", records}, {"summary", summary}}.dump(2) + "\n");
    out << "Overheads and summary: " << (results / "bench" / "lab03_overheads.json").string()
        << "\n";
  });
}
