// Lab 01 performance spec: what each perf test times, the work the roofline counts, and advice.
// `ctest --preset lab01 -L perf` compares your kernels with the reference, interleaved; run
// `build/lab01/labs/01_vectorized_relu/lab01_perf` to time yours alone against the ceilings.
// Each case calls the function it times through perf.timed(...): here that is your function (or
// the reference's); the lab's bench times the handout's numbered versions in its place, on the
// same inputs, which is where the handout's table comes from.
#include "vector_ops.hpp"
#include "vector_ops_hints.hpp"
#include "vector_ops_oracle.hpp"

#include <workbook/buffer.hpp>
#include <workbook/perf.hpp>

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
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

// --- Evidence for the hints ----------------------------------------------------------------------
// A hint says what was measured on this submission, beside loops of known shape timed on the same
// inputs in the same process: a scalar loop (one element at a time), a vectorised loop with
// ordinary stores, a vectorised sum with one accumulator. What those comparisons show decides the
// advice, so that a kernel is never asked to do what it already does ("is the loop vectorised?" of
// a vectorised loop).

using Batch = xsimd::batch<float>;

// Seconds per call of `call`: the fastest of a few calls after a first, untimed one (about 20 ms
// in all, at least 2 calls).
template <class Call>
double best_seconds(Call call) {
  using Clock = std::chrono::steady_clock;
  call();
  double best = 1e30, spent = 0;
  for (int r = 0; r < 100 && (r < 2 || spent < 0.02); ++r) {
    const auto t0 = Clock::now();
    call();
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, t);
    spent += t;
  }
  return best;
}

// out[i] = f(i) one element at a time: the compiler fence keeps it from vectorising the loop. (f
// captures its inputs' addresses by value: the fence then holds back nothing but the vectorising.)
template <class F>
void scalar_loop(std::span<float> out, F f) {
  float* const y = out.data();
  for (std::size_t i = 0; i < out.size(); ++i) {
    y[i] = f(i);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
}

// out[i] = f(i) in whole batches with ordinary stores, then a scalar tail.
template <class BatchAt, class F>
void ordinary_stores(std::span<float> out, BatchAt batch_at, F f) {
  std::size_t i = 0;
  for (; i + Batch::size <= out.size(); i += Batch::size) batch_at(i).store_unaligned(&out[i]);
  for (; i < out.size(); ++i) out[i] = f(i);
}

// Measures the evidence for a streaming kernel's hint (lab01::hints::streaming):
// `kernel(n, calls)` runs the submission `calls` times on the first n elements of its inputs,
// `scalar(n)` and `ordinary(n)` the two loops of known shape on the same elements; `bytes` per
// element, `n` the case's size. From memory only when the loop is vectorised.
template <class Kernel, class Scalar, class Ordinary>
std::string streaming_hint(const std::string& function, Kernel kernel, Scalar scalar,
                           Ordinary ordinary, double bytes, std::size_t n) {
  // In L1, where memory does not bind: is the loop any faster than one element at a time?
  const double yours_l1 = best_seconds([&] { kernel(kInCache, 64); }) / 64;
  const double scalar_l1 = best_seconds([&] {
                             for (int c = 0; c < 64; ++c) scalar(kInCache);
                           }) /
                           64;
  const double per_ns = double(kInCache) / yours_l1 / 1e9;
  const double scalar_per_ns = double(kInCache) / scalar_l1 / 1e9;
  if (!lab01::hints::vectorised(per_ns, scalar_per_ns))
    return lab01::hints::streaming(function, kInCache, per_ns, scalar_per_ns, 0, 0);
  // From memory: as fast as ordinary stores, or faster (it writes around the cache already)?
  const double yours = best_seconds([&] { kernel(n, 1); });
  const double plain = best_seconds([&] { ordinary(n); });
  return lab01::hints::streaming(function, kInCache, per_ns, scalar_per_ns,
                                 bytes * double(n) / yours / 1e9, bytes * double(n) / plain / 1e9);
}

// Times relu on n uniform floats, `calls` calls per timed run (the caller describes the case);
// with `hint`, first gathers the evidence for the hint (see streaming_hint).
void measure_relu(workbook::perf::Case& perf, std::size_t n, int calls, bool hint = false) {
  AlignedVector<float> x(n);
  workbook::fill_uniform(x, perf.rng());
  GuardedBuffer<float> y(n);
  const auto relu = perf.timed(lab01::relu);
  if (hint) {
    const std::span<const float> xs(x);
    auto f = [x = xs.data()](std::size_t i) { return x[i] <= 0.0f ? 0.0f : x[i]; };
    perf.hint(0.85, streaming_hint(
                        "relu",
                        [&](std::size_t m, int c) {
                          for (int r = 0; r < c; ++r) relu(xs.first(m), y.span().first(m));
                        },
                        [&](std::size_t m) { scalar_loop(y.span().first(m), f); },
                        [&](std::size_t m) {
                          ordinary_stores(
                              y.span().first(m),
                              [&](std::size_t i) {
                                const Batch v = Batch::load_unaligned(&xs[i]);
                                return xsimd::select(v <= Batch(0.0f), Batch(0.0f), v);
                              },
                              f);
                        },
                        8.0, n));
  }
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
  measure_relu(perf, kStream, 1, true);
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
  const std::span<const float> as(a), bs(b);
  auto f = [op, x = as.data(), y = bs.data()](std::size_t i) {
    return op == Binary::add        ? x[i] + y[i]
           : op == Binary::multiply ? x[i] * y[i]
                                    : (x[i] - y[i]) * (x[i] - y[i]);
  };
  auto batch_at = [&](std::size_t i) {
    const Batch x = Batch::load_unaligned(&as[i]), y = Batch::load_unaligned(&bs[i]);
    return op == Binary::add ? x + y : op == Binary::multiply ? x * y : (x - y) * (x - y);
  };
  perf.hint(0.85, streaming_hint(
                      lab01::oracle::name(op),
                      [&](std::size_t m, int c) {
                        for (int r = 0; r < c; ++r)
                          kernel(as.first(m), bs.first(m), out.span().first(m));
                      },
                      [&](std::size_t m) { scalar_loop(out.span().first(m), f); },
                      [&](std::size_t m) { ordinary_stores(out.span().first(m), batch_at, f); },
                      12.0, kBinary));
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

// Measures the evidence for a reduction's hint (lab01::hints::reduction): the submission, a scalar
// sum and a vectorised sum with one accumulator, on the same inputs in L1.
template <class Call>
std::string reduction_hint(const std::string& function, Call yours_call, std::span<const float> a,
                           std::span<const float> b) {
  volatile float sink = 0;  // keeps each result, so that no call is optimised away
  const double yours = best_seconds([&] { sink = yours_call(); });
  const double scalar = best_seconds([&] {
    float s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];  // in order: not vectorised
    sink = s;
  });
  const double one_accumulator = best_seconds([&] {
    Batch acc(0.0f);
    std::size_t i = 0;
    for (; i + Batch::size <= a.size(); i += Batch::size)
      acc = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
    float s = xsimd::hadd(acc);
    for (; i < a.size(); ++i) s += a[i] * b[i];
    sink = s;
  });
  const double n = double(a.size());
  return lab01::hints::reduction(function, a.size(), n / yours / 1e9, n / scalar / 1e9,
                                 n / one_accumulator / 1e9);
}

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
  perf.hint(0.85, reduction_hint(
                      perf.function(), [&] { return kernel(a, b); }, a, b));
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
