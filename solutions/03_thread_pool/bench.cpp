// Lab 03 bench: the reference and its earlier versions against this machine's measured ceilings and
// against OpenMP's `parallel for`, all in one run: the speedups, the memory-bound ReLU against the
// all-core copy roof, and the overhead of a task.
// Run: cmake --workflow --preset bench   (it prints the tables and writes JSON and a plot)
#include "thread_pool.hpp"
#include "versions.hpp"

#include "batch_ops.hpp"
#include "relu_chunk.hpp"
#include "thread_pool_oracle.hpp"

#include <workbook/bench.hpp>
#include <workbook/ceilings.hpp>
#include <workbook/report.hpp>
#include <workbook/timing.hpp>

#include <cstdint>
#include <cstdlib>
#include <future>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

namespace v = lab03::versions;
using lab03::Range;
using lab03::Tensor;
using lab03::ThreadPool;
using workbook::Bench;

// Keeps the compiler from deleting an empty loop body: the overhead rows time nothing but the
// machinery around it.
inline void nothing() { asm volatile("" ::: "memory"); }

void require(const workbook::CheckResult& check, const std::string& what) {
  if (!check) throw std::runtime_error("the bench's " + what + " gave a wrong result:\n" + check.report());
}

std::string format_us(double seconds) { return workbook::format_fixed(seconds * 1e6, 2) + " us"; }

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
#endif
  std::string ceilings_path;
  std::filesystem::path results;
  if (!workbook::parse_bench_arguments(argc, argv, ceilings_path, results)) return 2;
  Bench bench("lab03", workbook::load_or_measure_ceilings(ceilings_path, false));
  workbook::Rng rng(workbook::seed_for("lab03.bench"));
  const unsigned threads = bench.ceilings().threads;  // one per logical CPU, as the all-core roofs
  ThreadPool pool(threads), one(1);
#if defined(_OPENMP)
  omp_set_num_threads(static_cast<int>(threads));
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
#endif
  const std::string on_all = std::to_string(threads) + " threads";
  std::cerr << "lab03 bench: " << on_all << "\n";

  // --- Memory bound: ReLU of 64 Mi floats, 256 MiB in and 256 MiB out -----------------------------
  double relu_reference_gbs = 0, relu_1t_seconds = 0, relu_seconds = 0, relu_omp_seconds = 0;
  {
    const std::size_t n = std::size_t{64} << 20;
    workbook::AlignedVector<float> x(n), y(n);
    workbook::fill_uniform(x, rng);
    const std::span<const float> in(x);
    const std::span<float> out(y);
    const std::size_t chunk = std::size_t{1} << 20;  // the reference's grain at this size
    const workbook::Work work{.ops = double(n), .bytes = 8.0 * n, .threads = threads};
    std::vector<Bench::Version> versions = {
        {"1 thread: relu_chunk, streaming stores", [&] { lab03::relu_chunk(in, out, lab03::Stores::streaming); }},
        {"v1 " + on_all + " started per call", [&] { v::parallel_relu_v1_threads(threads, in, out); }},
        {"pool, ordinary stores", [&] { v::parallel_relu_with(pool, in, out, chunk, lab03::Stores::ordinary); }},
        {"pool, chunks of 4 Ki floats", [&] { v::parallel_relu_with(pool, in, out, 4096, lab03::Stores::streaming); }},
        {"pool, one chunk per worker", [&] {
           v::parallel_relu_with(pool, in, out, (n / threads + 15) / 16 * 16, lab03::Stores::streaming);
         }},
        {"reference: pool, 1 Mi-float chunks, streaming", [&] { lab03::parallel_relu(pool, in, out); },
         Bench::kReference},
        {"copy, the probe's kernel on the pool", [&] {
           lab03::parallel_for(pool, {0, n}, chunk, [&](Range r) {
             workbook::copy_streaming(in.subspan(r.begin, r.size()), out.subspan(r.begin, r.size()));
           });
         }},
    };
#if defined(_OPENMP)
    versions.push_back({"OpenMP parallel for, static, same chunks", [&] {
                          const long chunks = static_cast<long>(n / chunk);
#pragma omp parallel for schedule(static)
                          for (long k = 0; k < chunks; ++k)
                            lab03::relu_chunk(in.subspan(k * chunk, chunk), out.subspan(k * chunk, chunk),
                                              lab03::Stores::streaming);
                        }});
#endif
    const std::vector<workbook::Analysis> a = bench.compare("parallel_relu, 64 Mi floats", work, versions);
    relu_1t_seconds = a[0].seconds;
    relu_seconds = a[5].seconds;
    relu_reference_gbs = a[5].gbs;
    if (a.size() > 7) relu_omp_seconds = a[7].seconds;
    workbook::GuardedBuffer<float> check(n);
    lab03::parallel_relu(pool, in, check.span());
    require(lab03::oracle::check_relu(in, check), "parallel_relu");
  }

  // --- Compute bound: a degree-64 polynomial on a batch of 64 tensors -----------------------------
  double batch_1t_seconds = 0, batch_seconds = 0, batch_omp_seconds = 0;
  {
    lab03::ops::keep_freed_memory();  // time the arithmetic, not page faults (see there)
    const std::vector<Tensor> batch = lab03::ops::make_batch(64, 32 << 10, 96 << 10, rng);
    const std::vector<Tensor> expected = lab03::oracle::serial(batch, lab03::ops::polynomial);
    const double n = double(lab03::ops::elements(batch));
    const workbook::Work work{.ops = lab03::ops::kFlopsPerElement * n, .bytes = 8.0 * n, .threads = threads};
    std::vector<Tensor> results;
    std::vector<Bench::Version> versions = {
        {"1 thread: a loop over the batch", [&] { results = lab03::oracle::serial(batch, lab03::ops::polynomial); }},
        {"the reference on a pool of 1 thread", [&] { results = lab03::process_batch(one, batch, lab03::ops::polynomial); }},
        {"v2 one task per tensor", [&] {
           results = v::process_batch_v2_task_per_tensor(pool, batch, lab03::ops::polynomial);
         }},
        {"reference: chunks claimed from a counter", [&] {
           results = lab03::process_batch(pool, batch, lab03::ops::polynomial);
         }, Bench::kReference},
    };
#if defined(_OPENMP)
    versions.push_back({"OpenMP parallel for, dynamic, 1 tensor", [&] {
                          results.assign(batch.size(), Tensor());
                          const long count = static_cast<long>(batch.size());
#pragma omp parallel for schedule(dynamic, 1)
                          for (long i = 0; i < count; ++i) results[i] = lab03::ops::polynomial(batch[i]);
                        }});
#endif
    const std::vector<workbook::Analysis> a = bench.compare("process_batch, 64 tensors, 4 Mi floats", work, versions);
    batch_1t_seconds = a[0].seconds;
    batch_seconds = a[3].seconds;
    if (a.size() > 4) batch_omp_seconds = a[4].seconds;
    require(lab03::oracle::check_batch(lab03::process_batch(pool, batch, lab03::ops::polynomial), expected),
            "process_batch");
  }

  // --- Overhead: what a task, a chunk or a call costs when the work itself is nothing --------------
  // Not a roofline matter (no bytes, no operations): timed interleaved all the same, and shown per item.
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
      {"std::jthread started and joined, " + on_all, double(threads), "thread", [&] {
         std::vector<std::jthread> team;
         for (unsigned t = 0; t < threads; ++t) team.emplace_back(nothing);
       }},
      {"submit + get, one task at a time (round trip)", 256, "task", [&] {
         for (int i = 0; i < 256; ++i) pool.submit(nothing).get();
       }},
      {"submit 16384 tasks, then get them all (the reference pool)", double(kTasks), "task", [&] {
         for (std::size_t i = 0; i < kTasks; ++i) futures.push_back(pool.submit(nothing));
         for (std::future<void>& f : futures) f.get();
         futures.clear();
       }},
      {"parallel_for v2, 16384 chunks of one task each", double(kTasks), "chunk", [&] {
         v::parallel_for_v2_task_per_chunk(pool, {0, kTasks}, 1, empty);
       }},
      {"parallel_for reference, 16384 chunks claimed from a counter", double(kTasks), "chunk", [&] {
         lab03::parallel_for(pool, {0, kTasks}, 1, empty);
       }},
      {"parallel_for reference, one chunk per worker (fork-join)", 1, "call", [&] {
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
  overheads.push_back({"false sharing: counters 8 bytes apart, " + on_all, double(kIncrements), "increment", [&] {
                         lab03::parallel_for(pool, {0, threads}, 1, [&](Range r) { count_up(&adjacent[r.begin]); });
                       }});
  overheads.push_back({"no false sharing: counters 64 bytes apart", double(kIncrements), "increment", [&] {
                         lab03::parallel_for(pool, {0, threads}, 1, [&](Range r) { count_up(&padded[r.begin].value); });
                       }});
#if defined(_OPENMP)
  overheads.push_back({"OpenMP parallel for, dynamic,1, 16384 iterations", double(kTasks), "iteration", [] {
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
  const std::vector<workbook::Timing> timings = workbook::time_interleaved(runners, {.max_seconds = 1.0});
  workbook::Table table({"overhead of", "per item", "spread", "per call"});
  nlohmann::json records = nlohmann::json::array();
  double task_overhead = 0;
  for (std::size_t k = 0; k < overheads.size(); ++k) {
    const workbook::Summary& s = timings[k].summary;
    const double per_item = s.median / overheads[k].items;
    if (k == 2) task_overhead = per_item;
    table.add({overheads[k].label, workbook::format_seconds(per_item) + " per " + overheads[k].item,
               "+-" + workbook::format_percent(s.rel_iqr() / 2), workbook::format_seconds(s.median)});
    records.push_back({{"label", overheads[k].label}, {"item", overheads[k].item}, {"items_per_call", overheads[k].items},
                       {"seconds_per_item", per_item}, {"timing", workbook::to_json(s)}});
  }

  bench.finish(std::cout, results);
  std::cout << "\nlab03 overheads (" << on_all << ", interleaved):\n" << table.str();
  const workbook::Ceilings& c = bench.ceilings();
  nlohmann::json summary = {
      {"threads", threads},
      {"relu_fraction_of_copy_all", relu_reference_gbs / c.copy_all_gbs},
      {"relu_speedup", relu_1t_seconds / relu_seconds},
      {"batch_speedup", batch_1t_seconds / batch_seconds},
      {"task_overhead_seconds", task_overhead}};
  std::cout << "\nlab03 against its targets (" << on_all << "):\n"
            << "  process_batch (compute bound): speedup " << workbook::format_fixed(batch_1t_seconds / batch_seconds, 2)
            << "x over one thread, parallel efficiency "
            << workbook::format_percent(batch_1t_seconds / batch_seconds / threads) << " (target: 1.8x on 2 threads)\n"
            << "  parallel_relu (memory bound): " << workbook::format_fixed(relu_reference_gbs) << " GB/s, "
            << workbook::format_percent(relu_reference_gbs / c.copy_all_gbs) << " of the all-core copy roof ("
            << workbook::format_fixed(c.copy_all_gbs) << " GB/s; target 90%), speedup "
            << workbook::format_fixed(relu_1t_seconds / relu_seconds, 2) << "x over one thread\n"
            << "  task overhead: " << format_us(task_overhead) << " per task, submitted in a stream (target < 5 us)\n";
#if defined(_OPENMP)
  summary["openmp_wait_policy"] = wait_policy ? wait_policy : "";
  summary["relu_openmp_over_reference"] = relu_omp_seconds / relu_seconds;
  summary["batch_openmp_over_reference"] = batch_omp_seconds / batch_seconds;
  std::cout << "  OpenMP (OMP_WAIT_POLICY=" << (wait_policy ? wait_policy : "") << "), time over the reference's: "
            << "parallel_relu " << workbook::format_fixed(relu_omp_seconds / relu_seconds, 2) << "x, process_batch "
            << workbook::format_fixed(batch_omp_seconds / batch_seconds, 2) << "x\n";
#endif
  workbook::write_file(results / "bench" / "lab03_overheads.json",
                       nlohmann::json{{"overheads", records}, {"summary", summary}}.dump(2) + "\n");
  std::cout << "Overheads and summary: " << (results / "bench" / "lab03_overheads.json").string() << "\n";
  return 0;
}
