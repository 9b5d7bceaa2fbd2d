// Lab 04 performance spec: what each perf test times, the work the roofline counts, and advice.
// `ctest --preset lab04 -L perf` compares your kernels with the reference, interleaved; run
// `build/lab04/labs/04_int8_quantization/lab04_perf` to time yours alone against the ceilings.
// Each case calls the function it times through perf.timed(...): here that is yours (or the
// reference's); the lab's bench times the handout's numbered versions in its place, on the same
// inputs, which is where the handout's table comes from.
#include "quantize.hpp"
#include "quantize_oracle.hpp"

#include <workbook/buffer.hpp>
#include <workbook/perf.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#if defined(LAB04_HAVE_OPENBLAS)
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

namespace {

using workbook::AlignedVector;
using workbook::Compute;
using workbook::GuardedBuffer;
using workbook::Traffic;

// Streaming kernels run on working sets at or past the cache knee (workbook-probe shows it: 256 MiB
// on our machine), so that memory bandwidth is what is measured: 64 Mi floats are 256 MiB. (Per-row
// quantization is timed by the bench only, below: it is symmetric_scale and quantize, one row at a
// time.)
constexpr std::size_t kStream = std::size_t{64} << 20;
// The products: 1024^3, 2 Gi operations per call, compute bound (and 2048^3 in the bench).
constexpr std::size_t kSide = 1024;

std::string mib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f MiB", bytes / (1 << 20));
  return text;
}

// --- Evidence for the hints ----------------------------------------------------------------------
// A hint says what was measured about this submission (before the timed comparison) and what that
// points to, so that it never contradicts the code: a kernel whose time per element is the same
// with its data in the L2 cache as from memory is bound by its own instructions, whatever they
// are; one that is much faster from the cache is bound by memory.

/// The fastest of up to `calls` calls of `run`, after one more that warms the caches (and lets the
/// kernel allocate what it keeps): enough to compare one size with another, not a timing of
/// record. A call of more than a quarter of a second is long enough to count, warm-up or not, and
/// ends the series, so that a slow kernel costs one or two calls.
double fastest_call(const std::function<void()>& run, int calls) {
  constexpr double kLongEnough = 0.25;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= calls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    if (i > 0 || took.count() > kLongEnough) best = std::min(best, took.count());
    if (std::isfinite(best) && best > kLongEnough) break;
  }
  return best;
}

// Elements of a streaming kernel's run in the L2 cache: 16 Ki floats in, 16 KiB of bytes out.
constexpr std::size_t kInL2 = std::size_t{16} << 10;

std::string format(const char* pattern, double value) {
  char text[32];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

/// The hint of a streaming kernel: its time per element with the data in the L2 cache (`in_l2`, a
/// call on the first kInL2 elements) and from memory (`from_memory`, on all n), then the advice
/// for what binds it.
std::string streaming_hint(const std::string& function, const std::function<void()>& in_l2,
                           const std::function<void()>& from_memory, std::size_t n,
                           const std::string& if_instructions, const std::string& if_memory) {
  const double cached = fastest_call(in_l2, 20) / kInL2 * 1e9,
               memory = fastest_call(from_memory, 2) / static_cast<double>(n) * 1e9;
  const std::string measured = "Measured before the comparison: your " + function + " takes " +
                               format("%.3g", cached) + " ns per element with its data in the L2 " +
                               "cache, and " + format("%.3g", memory) + " ns from memory";
  if (cached > 0.5 * memory)
    return measured + ", nearly as long: the loop's own instructions bind it, not memory. " +
           if_instructions;
  return measured + ": " + format("%.1f", memory / cached) +
         " times faster from the cache, so its instructions keep up and memory binds it. " +
         if_memory;
}

void symmetric_scale(workbook::perf::Case& perf) {
  AlignedVector<float> x(kStream);
  workbook::fill_uniform(x, perf.rng());
  float scale = 0;
  const auto symmetric_scale = perf.timed(lab04::symmetric_scale);
  perf.describe("symmetric_scale", "max |x| / 127 of 64 Mi floats (256 MiB read)");
  // An abs and a max per element; every element read once, nothing written.
  perf.work({.ops = 2.0 * kStream, .bytes = 4.0 * kStream, .traffic = Traffic::read});
  perf.hint(
      0.85,
      streaming_hint(
          "symmetric_scale",
          [&] { scale = symmetric_scale(std::span<const float>(x).first(kInL2)); },
          [&] { scale = symmetric_scale(x); }, kStream,
          "Look at what it executes per element (objdump -d): a max that waits for the previous "
          "one (one accumulator: use several, as for lab 01's dot product), a branch per element "
          "for NaN and infinity (test a whole batch with one comparison), or one element at a "
          "time where xsimd::abs and xsimd::max do a batch.",
          "Read x once, in order, with nothing else in the loop; several accumulators keep "
          "enough loads in flight."));
  perf.measure({.run = [&] { scale = symmetric_scale(x); },
                .poison = [&] { scale = workbook::Poison<float>::value(); },
                .verify = [&] { return lab04::oracle::check_symmetric_scale(x, scale); },
                .output = workbook::perf::output_of(scale, workbook::Tolerance::exact())});
}
WORKBOOK_PERF_CASE(symmetric_scale);

void quantize(workbook::perf::Case& perf) {
  AlignedVector<float> x(kStream);
  workbook::fill_uniform(x, perf.rng(), -3.0, 3.0);
  const float scale = lab04::oracle::symmetric_scale(x);
  GuardedBuffer<std::int8_t> q(kStream);
  const auto quantize = perf.timed(lab04::quantize);
  perf.describe("quantize", "quantize 64 Mi floats to int8 (256 MiB in, 64 MiB out)");
  // A division, a rounding and a clamp (two comparisons): 4 operations per element; 4 bytes in, 1
  // out.
  perf.work({.ops = 4.0 * kStream, .bytes = 5.0 * kStream});
  perf.hint(
      0.8,
      streaming_hint(
          "quantize",
          [&] { quantize(std::span<const float>(x).first(kInL2), scale, q.span().first(kInL2)); },
          [&] { quantize(x, scale, q.span()); }, kStream,
          "Look at what it executes per element (objdump -d): a float-to-int8 conversion or "
          "store one lane at a time (xsimd 8 converts element by element; section 4 of the "
          "handout shows the two AVX-512 instructions that convert and narrow 16 lanes at once), "
          "a division, or a branch per element.",
          "Read x once, in order; the int8 output is a fifth of the traffic, and streaming "
          "stores (lab 01, step 6) skip the read of each of its cache lines."));
  perf.measure({.run = [&] { quantize(x, scale, q.span()); },
                .poison = [&] { q.poison(); },
                .verify = [&] { return lab04::oracle::check_quantize(x, scale, q); },
                // As check_quantize: exact, except that either neighbour of a near tie is right.
                .output = workbook::perf::output_of(
                    q, lab04::oracle::quantize_tolerance(), [&](std::size_t i) {
                      return lab04::oracle::near_tie(x[i], scale) ? 1.0 : 0.0;
                    })});
}
WORKBOOK_PERF_CASE(quantize);

void dequantize(workbook::perf::Case& perf) {
  AlignedVector<std::int8_t> q(kStream);
  lab04::oracle::fill_int8(q, perf.rng());
  GuardedBuffer<float> x(kStream);
  const auto dequantize = perf.timed(lab04::dequantize);
  perf.describe("dequantize", "dequantize 64 Mi int8 values to floats (64 MiB in, 256 MiB out)");
  perf.work({.ops = 1.0 * kStream, .bytes = 5.0 * kStream});
  perf.hint(
      0.8,
      streaming_hint(
          "dequantize",
          [&] {
            dequantize(std::span<const std::int8_t>(q).first(kInL2), 0.01f, x.span().first(kInL2));
          },
          [&] { dequantize(q, 0.01f, x.span()); }, kStream,
          "Look at what it executes per element (objdump -d): a byte-to-float conversion one "
          "lane at a time (xsimd converts lane by lane; section 4 of the handout widens a whole "
          "batch of bytes with two instructions), or a branch per element.",
          "The 256 MiB output is most of the traffic, and each store first reads its cache line "
          "(read-for-ownership): streaming stores (lab 01, step 6) avoid that."));
  perf.measure({.run = [&] { dequantize(q, 0.01f, x.span()); },
                .poison = [&] { x.poison(); },
                .verify = [&] { return lab04::oracle::check_dequantize(q, 0.01f, x); },
                .output = workbook::perf::output_of(x, workbook::Tolerance::roundings(1))});
}
WORKBOOK_PERF_CASE(dequantize);

void quantized_relu(workbook::perf::Case& perf) {
  // 128 Mi bytes: a working set of 256 MiB, like the float cases.
  const std::size_t n = 2 * kStream;
  AlignedVector<std::int8_t> q(n);
  lab04::oracle::fill_int8(q, perf.rng());
  GuardedBuffer<std::int8_t> out(n);
  const auto quantized_relu = perf.timed(lab04::quantized_relu);
  perf.describe("quantized_relu", "ReLU of 128 Mi int8 values (128 MiB in, 128 MiB out)");
  perf.work({.ops = 1.0 * n, .bytes = 2.0 * n});
  perf.hint(0.85, streaming_hint(
                      "quantized_relu",
                      [&] {
                        quantized_relu(std::span<const std::int8_t>(q).first(kInL2),
                                       out.span().first(kInL2));
                      },
                      [&] { quantized_relu(q, out.span()); }, n,
                      "Look at what it executes per element (objdump -d): a batch of int8 holds 64 "
                      "lanes with AVX-512, and xsimd::max(batch, zero) does them all at once; a "
                      "branch or a conversion per element does not.",
                      "Streaming stores (lab 01, step 6) skip the read of each output line."));
  perf.measure({.run = [&] { quantized_relu(q, out.span()); },
                .poison = [&] { out.poison(); },
                .verify = [&] { return lab04::oracle::check_quantized_relu(q, out); },
                .output = workbook::perf::output_of(out, workbook::Tolerance::exact())});
}
WORKBOOK_PERF_CASE(quantized_relu);

// The hints of the two products, from the rate of `small` (a product whose operands fit in the L2
// cache) and of `large` (the case's own), both measured here: a large product much slower than
// the small one waits on memory; one as fast runs at the speed of its inner loop.
void product_hints(workbook::perf::Case& perf, const std::string& function,
                   const std::string& small_shape, double small_ops,
                   const std::function<void()>& small, double large_ops,
                   const std::function<void()>& large) {
  const double small_gops = small_ops / fastest_call(small, 5) * 1e-9,
               large_gops = large_ops / fastest_call(large, 3) * 1e-9;
  const std::string measured = "Measured before the comparison: your " + function + " does " +
                               format("%.3g", small_gops) + " GOP/s on a " + small_shape +
                               " product (A and B in the L2 cache), and " +
                               format("%.3g", large_gops) + " GOP/s on this one";
  if (small_gops > 2.5 * large_gops) {  // well beyond what noise does to the fastest of 3
    perf.hint(0.85, measured +
                        ": the inner loop is fast, and the large product waits on memory. "
                        "Block it so that what the inner loop rereads stays in cache: a "
                        "panel of B in the L2, a few rows of A in the L1 (step 8).");
    return;
  }
  const std::string same = measured +
                           ", about the same: the instructions of the inner loop bind "
                           "it, not memory. ";
  perf.hint(0.15, same +
                      "The int8 peak is vpdpbusd (step 7: 64 products per instruction) into "
                      "several accumulators, each fed by one load: compare your inner loop's "
                      "instructions with that (objdump -d).");
  perf.hint(0.5, same +
                     "The reference keeps a 6 x 64 tile of C in 24 registers, with B packed so "
                     "that the inner loop reads it in order and 4 bytes of each of A's 6 rows "
                     "broadcast per step (step 8, the micro-kernel).");
  perf.hint(0.85, same +
                      "Close to the reference: check that your micro-kernel's accumulators "
                      "stay in registers (objdump -d: no loads or stores to the stack in the "
                      "inner loop).");
}

// A product whose operands fit in the L2 cache, for product_hints: the first kSmallRows rows of A
// and of B, all of the depth (64 KiB each at depth 1024).
constexpr std::size_t kSmallRows = 64;

// The int8 product C = A B^T of side `side`.
void int8_product(workbook::perf::Case& perf, std::size_t side, const std::string& about) {
  const std::size_t m = side, n = side, depth = side;
  AlignedVector<std::int8_t> a(m * depth), b(n * depth);
  lab04::oracle::fill_int8(a, perf.rng());
  lab04::oracle::fill_int8(b, perf.rng());
  const std::vector<std::int64_t> want = lab04::oracle::product(a, b, m, n, depth);
  GuardedBuffer<std::int32_t> c(m * n);
  const auto matmul_int8 = perf.timed(lab04::matmul_int8);
  perf.describe("matmul_int8", about);
  // A multiply and an add per term; A and B read once, C written once (int32).
  perf.work({.ops = 2.0 * m * n * depth,
             .bytes = 1.0 * (m + n) * depth + 4.0 * m * n,
             .compute = Compute::int8,
             .ops_unit = "OP"});
  std::vector<std::int32_t> small_c(kSmallRows * kSmallRows);
  product_hints(
      perf, "matmul_int8",
      std::to_string(kSmallRows) + " x " + std::to_string(kSmallRows) + " x " +
          std::to_string(depth),
      2.0 * kSmallRows * kSmallRows * depth,
      [&] {
        matmul_int8(std::span<const std::int8_t>(a).first(kSmallRows * depth),
                    std::span<const std::int8_t>(b).first(kSmallRows * depth), small_c, kSmallRows,
                    kSmallRows, depth);
      },
      2.0 * m * n * depth, [&] { matmul_int8(a, b, c.span(), m, n, depth); });
  perf.measure(
      {.run = [&] { matmul_int8(a, b, c.span(), m, n, depth); },
       .poison = [&] { c.poison(); },
       .verify = [&] { return lab04::oracle::check_matmul_int8(a, b, want, c, m, n, depth); },
       .output = workbook::perf::output_of(c, workbook::Tolerance::exact())});
}

void matmul_int8(workbook::perf::Case& perf) {
  int8_product(perf, kSide,
               "int8 product C = A B^T, 1024 x 1024 x 1024, exact int32 sums (A and B: "
               "1 MiB each as int8, 4 MiB as fp32)");
}
WORKBOOK_PERF_CASE(matmul_int8);

void quantized_matmul(workbook::perf::Case& perf) {
  const std::size_t m = kSide, n = kSide, depth = kSide;
  AlignedVector<float> xa(m * depth), xb(n * depth);
  workbook::fill_uniform(xa, perf.rng());
  workbook::fill_uniform(xb, perf.rng());
  // Quantized per row by the oracle's own quantizer, so that this case times the product alone.
  AlignedVector<std::int8_t> qa(m * depth), qb(n * depth);
  std::vector<float> sa(m), sb(n);
  auto quantize_rows = [depth](const AlignedVector<float>& x, std::vector<float>& scales,
                               AlignedVector<std::int8_t>& q) {
    for (std::size_t r = 0; r < scales.size(); ++r) {
      scales[r] =
          lab04::oracle::symmetric_scale(std::span<const float>(x).subspan(r * depth, depth));
      for (std::size_t k = 0; k < depth; ++k)
        q[r * depth + k] =
            static_cast<std::int8_t>(lab04::oracle::quantized(x[r * depth + k], scales[r]));
    }
  };
  quantize_rows(xa, sa, qa);
  quantize_rows(xb, sb, qb);
  const lab04::QuantizedMatrix a{qa, sa, m, depth}, b{qb, sb, n, depth};
  const std::vector<std::int64_t> exact = lab04::oracle::product(qa, qb, m, n, depth);
  GuardedBuffer<float> c(m * n);
  const auto quantized_matmul = perf.timed(lab04::quantized_matmul);

  // The accuracy against the fp32 product, on the first 32 rows (the error model's bound in the
  // handout): what int8 costs, beside what it saves.
  const std::size_t sample = 32;
  const lab04::QuantizedMatrix a_sample{std::span<const std::int8_t>(qa).first(sample * depth),
                                        std::span<const float>(sa).first(sample), sample, depth};
  const auto bound = lab04::oracle::accuracy_bound(std::span<const float>(xa).first(sample * depth),
                                                   xb, a_sample, b);
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < sample * n; ++i) {
    const double got = sa[i / n] * sb[i % n] * static_cast<double>(exact[i]);
    error += (got - bound.exact[i]) * (got - bound.exact[i]);
    norm += bound.exact[i] * bound.exact[i];
  }
  char accuracy[160];
  std::snprintf(accuracy, sizeof accuracy,
                "error against the fp32 product %.2f%% (norm-wise, rows 0-31; "
                "the handout's model predicts %.2f%%)",
                100 * std::sqrt(error / norm),
                100 * bound.predicted_rms / std::sqrt(norm / static_cast<double>(sample * n)));
  perf.describe("quantized_matmul",
                "float product of per-row quantized 1024 x 1024 matrices, 1024 deep; " +
                    std::string(accuracy) + "; operands " + mib(2.0 * m * depth) +
                    " as int8 instead of " + mib(8.0 * m * depth) + " as fp32");
  const workbook::Work int8_work{.ops = 2.0 * m * n * depth,
                                 .bytes = 1.0 * (m + n) * depth + 4.0 * (m + n + m * n),
                                 .compute = Compute::int8,
                                 .ops_unit = "OP"};
  perf.work(int8_work);
  const lab04::QuantizedMatrix a_small{std::span<const std::int8_t>(qa).first(kSmallRows * depth),
                                       std::span<const float>(sa).first(kSmallRows), kSmallRows,
                                       depth},
      b_small{std::span<const std::int8_t>(qb).first(kSmallRows * depth),
              std::span<const float>(sb).first(kSmallRows), kSmallRows, depth};
  std::vector<float> small_c(kSmallRows * kSmallRows);
  product_hints(
      perf, "quantized_matmul",
      std::to_string(kSmallRows) + " x " + std::to_string(kSmallRows) + " x " +
          std::to_string(depth),
      2.0 * kSmallRows * kSmallRows * depth, [&] { quantized_matmul(a_small, b_small, small_c); },
      int8_work.ops, [&] { quantized_matmul(a, b, c.span()); });
#if defined(LAB04_HAVE_OPENBLAS)
  // The fp32 baseline: the same product of the unquantized matrices with OpenBLAS, on one thread.
  openblas_set_num_threads(1);
  std::vector<float> c32(m * n);
  perf.extra({.label = "OpenBLAS sgemm, fp32",
              .side = workbook::perf::Extra::Side::library,
              .run =
                  [&] {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m),
                                static_cast<int>(n), static_cast<int>(depth), 1.0f, xa.data(),
                                static_cast<int>(depth), xb.data(), static_cast<int>(depth), 0.0f,
                                c32.data(), static_cast<int>(n));
                  },
              .work = {.ops = 2.0 * m * n * depth, .bytes = 4.0 * ((m + n) * depth + m * n)}});
#endif
  perf.measure({.run = [&] { quantized_matmul(a, b, c.span()); },
                .poison = [&] { c.poison(); },
                .verify = [&] { return lab04::oracle::check_quantized_matmul(a, b, exact, c); },
                .output = workbook::perf::output_of(c, workbook::Tolerance::roundings(3))});
}
WORKBOOK_PERF_CASE(quantized_matmul);

// For the bench only (no perf test): the handout's ladder of products at 512^3, where its v1 takes
// a fraction of a second.
void matmul_int8_512(workbook::perf::Case& perf) {
  int8_product(perf, 512, "int8 product C = A B^T, 512 x 512 x 512, exact int32 sums");
}
WORKBOOK_BENCH_CASE(matmul_int8_512);

// For the bench only (no perf test): 2048^3, the second size the reference is held against oneDNN
// at. Each panel of B (64 columns x 2048 bytes) is twice the size it is at 1024^3, and C (16 MiB)
// is far larger than the L2. About 20 ms a call for the reference; the oracle takes a few seconds.
void matmul_int8_2048(workbook::perf::Case& perf) {
  int8_product(perf, 2048,
               "int8 product C = A B^T, 2048 x 2048 x 2048, exact int32 sums (A and B: "
               "4 MiB each as int8)");
}
WORKBOOK_BENCH_CASE(matmul_int8_2048);

// For the bench only: per-row quantization of a 16384 x 4096 matrix (64 Mi floats): per element
// the abs and max of the scale, then quantize's 4 operations; 4 bytes in, 1 out (the scales, 64
// KiB, are negligible).
void quantize_rows(workbook::perf::Case& perf) {
  constexpr std::size_t cols = 4096, rows = kStream / cols;
  AlignedVector<float> x(kStream);
  workbook::fill_uniform(x, perf.rng(), -3.0, 3.0);
  GuardedBuffer<float> scales(rows);
  GuardedBuffer<std::int8_t> q(kStream);
  const auto quantize_rows = perf.timed(lab04::quantize_rows);
  perf.describe("quantize_rows", "quantize 16384 rows of 4096 floats to int8, a scale per row");
  perf.work({.ops = 6.0 * kStream, .bytes = 5.0 * kStream});
  perf.measure({.run = [&] { quantize_rows(x, cols, scales.span(), q.span()); },
                .poison =
                    [&] {
                      scales.poison();
                      q.poison();
                    },
                .verify =
                    [&] {
                      std::vector<float> want(rows);
                      for (std::size_t r = 0; r < rows; ++r)
                        want[r] = lab04::oracle::symmetric_scale(
                            std::span<const float>(x).subspan(r * cols, cols));
                      if (!std::equal(want.begin(), want.end(), scales.span().begin())) {
                        workbook::CheckResult wrong;
                        wrong.ok = false;
                        wrong.summary =
                            "quantize_rows: a row's scale is not max |x| / 127 of the row";
                        return wrong;
                      }
                      return lab04::oracle::check_quantize(x, want, cols, q, "quantize_rows");
                    }});
}
WORKBOOK_BENCH_CASE(quantize_rows);

}  // namespace
