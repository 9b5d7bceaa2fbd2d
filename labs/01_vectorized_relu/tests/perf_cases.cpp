// Lab 01 performance spec: what each perf test times, the work the roofline counts, and advice.
// `ctest --preset lab01 -L perf` compares your kernels with the reference, interleaved; run
// `build/lab01/labs/01_vectorized_relu/lab01_perf` to time yours alone against the ceilings.
// Each case calls the function it times through perf.timed(...): here that is your function (or
// the reference's); the lab's bench times the handout's numbered versions in its place, on the
// same inputs, which is where the handout's table comes from.
#include "vector_ops.hpp"
#include "vector_ops_oracle.hpp"

#include <workbook/buffer.hpp>
#include <workbook/perf.hpp>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

namespace {

using lab01::oracle::Binary;
using workbook::AlignedVector;
using workbook::GuardedBuffer;
using workbook::Traffic;

// Streaming kernels run on working sets several times larger than the caches (workbook-probe shows
// where bandwidth drops to memory's, the "cache knee"), so that memory bandwidth is what is
// measured.
// 64 Mi floats = 256 MiB per array, 512 MiB per call.
constexpr std::size_t kStream = std::size_t{64} << 20;
constexpr std::size_t kBinary = std::size_t{32} << 20;  // 32 Mi floats: 3 arrays, 384 MiB per call
// Reductions are timed where their limit is the core, not memory: 4096 floats (16 KiB) per input
// stay in the L1 cache, and one timed run makes many calls, so the clock's overhead vanishes.
constexpr std::size_t kInCache = 4096;
constexpr int kCallsPerRun = 512;

// Times relu on n uniform floats, `calls` calls per timed run (the caller describes the case).
void measure_relu(workbook::perf::Case& perf, std::size_t n, int calls) {
  AlignedVector<float> x(n);
  workbook::fill_uniform(x, perf.rng());
  GuardedBuffer<float> y(n);
  const auto relu = perf.timed(lab01::relu);
  perf.measure({.run =
                    [&] {
                      for (int i = 0; i < calls; ++i) relu(x, y.span());
                    },
                .poison = [&] { y.poison(); },
                .verify = [&] { return lab01::oracle::check_relu(x, y); },
                .output = workbook::perf::output_of(y, workbook::Tolerance::exact())});
}

void relu(workbook::perf::Case& perf) {
  perf.describe("relu", "ReLU of 64 Mi floats (256 MiB in, 256 MiB out)");
  // One max per element; each element read once (4 B) and written once (4 B).
  perf.work({.ops = double(kStream), .bytes = 8.0 * kStream});
  perf.hint(0.55,
            "Far from the bandwidth roof: is the loop vectorised? Load and store whole "
            "batches (Batch::load_unaligned, store_unaligned) and keep the scalar loop for the "
            "tail only.");
  perf.hint(
      0.85,
      "Vectorised, but each store first reads its cache line from memory (read-for-ownership): "
      "a third more traffic than the 8 bytes per element counted. Streaming stores "
      "(workbook::store_streaming, on an aligned output address) write around the cache; "
      "compare the probe's two copy figures.");
  measure_relu(perf, kStream, 1);
}
WORKBOOK_PERF_CASE(relu);

// For the bench only (no perf test): the same kernel on 4096 floats that stay in L1, where the
// core's load and store ports bind instead of memory. The handout's table shows both.
void relu_in_l1(workbook::perf::Case& perf) {
  perf.describe("relu", "ReLU of 4096 floats, in L1, 512 calls per timed run");
  perf.work({.ops = double(kInCache) * kCallsPerRun,
             .bytes = 8.0 * kInCache * kCallsPerRun,
             .traffic = Traffic::l1});
  measure_relu(perf, kInCache, kCallsPerRun);
}
WORKBOOK_BENCH_CASE(relu_in_l1);

using BinaryKernel = void (*)(std::span<const float>, std::span<const float>, std::span<float>);

void binary(workbook::perf::Case& perf, BinaryKernel function, Binary op, double ops_per_element) {
  AlignedVector<float> a(kBinary), b(kBinary);
  workbook::fill_uniform(a, perf.rng());
  workbook::fill_uniform(b, perf.rng());
  GuardedBuffer<float> out(kBinary);
  const auto kernel = perf.timed(function);
  perf.describe(lab01::oracle::name(op),
                std::string(lab01::oracle::name(op)) + " of 32 Mi floats (two arrays in, one out)");
  perf.work({.ops = ops_per_element * kBinary, .bytes = 12.0 * kBinary, .traffic = Traffic::triad});
  perf.hint(0.55, "Far from the bandwidth roof: vectorise the loop, whole batches at a time.");
  perf.hint(
      0.85,
      "Close, but ordinary stores read each output line before writing it: try streaming stores "
      "(see relu). The roof here is the triad kernel's bandwidth (two streams in, one out).");
  perf.measure({.run = [&] { kernel(a, b, out.span()); },
                .poison = [&] { out.poison(); },
                .verify = [&] { return lab01::oracle::check_binary(op, a, b, out); },
                .output = workbook::perf::output_of(out, lab01::oracle::tolerance(op))});
}
void add(workbook::perf::Case& perf) {
  binary(perf, lab01::add, Binary::add, 1);
}
void multiply(workbook::perf::Case& perf) {
  binary(perf, lab01::multiply, Binary::multiply, 1);
}
void squared_difference(workbook::perf::Case& perf) {
  binary(perf, lab01::squared_difference, Binary::squared_difference, 2);
}
WORKBOOK_PERF_CASE(add);
WORKBOOK_PERF_CASE(multiply);
WORKBOOK_PERF_CASE(squared_difference);

using Reduction = float (*)(std::span<const float>, std::span<const float>);

// A reduction of two vectors that stay in L1: bound by the core, not by memory. Its roof is the L1
// load rate (two loads per FMA), which a single accumulator cannot reach, because each FMA waits
// for the previous one's result.
template <class Check, class Oracle>
void reduction(workbook::perf::Case& perf, Reduction function, double ops_per_element, Check check,
               Oracle oracle) {
  AlignedVector<float> a(kInCache), b(kInCache);
  workbook::fill_uniform(a, perf.rng());
  workbook::fill_uniform(b, perf.rng());
  float result = 0;
  const auto kernel = perf.timed(function);
  // Per element: two 4-byte loads from L1.
  perf.work({.ops = ops_per_element * kInCache * kCallsPerRun,
             .bytes = 8.0 * kInCache * kCallsPerRun,
             .traffic = Traffic::l1});
  perf.hint(0.2, "Far below the roof: is the loop vectorised? Use xsimd::fma on whole batches.");
  perf.hint(0.6,
            "Vectorised, but one accumulator makes every FMA wait for the previous one (4 cycles "
            "or so): the core could start one per cycle. Keep 4 independent accumulators "
            "and add them together at the end.");
  perf.measure({.run =
                    [&] {
                      for (int i = 0; i < kCallsPerRun; ++i) result = kernel(a, b);
                    },
                .poison = [&] { result = workbook::Poison<float>::value(); },
                .verify = [&] { return check(a, b, result); },
                .output = workbook::perf::output_of(result, oracle(a, b))});
}

// dot: a multiply and an add (one FMA, 2 FLOP) per element.
void dot(workbook::perf::Case& perf) {
  perf.describe("dot", "dot of 4096 floats, in L1, 512 calls per timed run");
  reduction(perf, lab01::dot, 2, lab01::oracle::check_dot, lab01::oracle::dot_oracle);
}
WORKBOOK_PERF_CASE(dot);

// euclidean_distance: a subtraction and an FMA (3 FLOP) per element.
void euclidean_distance(workbook::perf::Case& perf) {
  perf.describe("euclidean_distance",
                "euclidean_distance of 4096 floats, in L1, 512 calls per timed run");
  reduction(perf, lab01::euclidean_distance, 3, lab01::oracle::check_euclidean,
            lab01::oracle::euclidean_oracle);
}
WORKBOOK_PERF_CASE(euclidean_distance);

// For the bench only (no perf test): the dot product from memory, a quarter FLOP per byte, so bound
// by memory, and reads only. Eight pairs of 8 Mi floats, 512 MiB per timed run: each call finds its
// pair evicted by the others, and each sum has under 2^24 terms, where check_dot's bound holds.
void dot_from_memory(workbook::perf::Case& perf) {
  constexpr std::size_t kPairs = 8, n = kStream / kPairs;
  std::vector<AlignedVector<float>> a(kPairs, AlignedVector<float>(n)),
      b(kPairs, AlignedVector<float>(n));
  for (std::size_t k = 0; k < kPairs; ++k) {
    workbook::fill_uniform(a[k], perf.rng());
    workbook::fill_uniform(b[k], perf.rng());
  }
  std::vector<float> results(kPairs);
  const auto dot = perf.timed(lab01::dot);
  perf.describe("dot",
                "dot of 8 pairs of 8 Mi floats (512 MiB read), each pair once per timed run");
  perf.work({.ops = 2.0 * kStream, .bytes = 8.0 * kStream, .traffic = Traffic::read});
  perf.measure(
      {.run =
           [&] {
             for (std::size_t k = 0; k < kPairs; ++k) results[k] = dot(a[k], b[k]);
           },
       .poison =
           [&] { std::fill(results.begin(), results.end(), workbook::Poison<float>::value()); },
       .verify =
           [&] {
             workbook::CheckResult check;
             for (std::size_t k = 0; k < kPairs && check; ++k)
               check = lab01::oracle::check_dot(a[k], b[k], results[k]);
             return check;
           }});
}
WORKBOOK_BENCH_CASE(dot_from_memory);

}  // namespace
