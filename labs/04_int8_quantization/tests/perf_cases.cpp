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
#include <cmath>
#include <cstdio>
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

void symmetric_scale(workbook::perf::Case& perf) {
  AlignedVector<float> x(kStream);
  workbook::fill_uniform(x, perf.rng());
  float scale = 0;
  const auto symmetric_scale = perf.timed(lab04::symmetric_scale);
  perf.describe("symmetric_scale", "max |x| / 127 of 64 Mi floats (256 MiB read)");
  // An abs and a max per element; every element read once, nothing written.
  perf.work({.ops = 2.0 * kStream, .bytes = 4.0 * kStream, .traffic = Traffic::read});
  perf.hint(0.5,
            "Far from the bandwidth roof: vectorise the max-reduction (xsimd::abs, xsimd::max) "
            "and test for NaN and infinity with a batch comparison, not a branch per element.");
  perf.hint(0.85,
            "Close: with one accumulator each max waits for the previous one; use several, as "
            "for lab 01's dot product.");
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
  perf.hint(0.4,
            "Far from the bandwidth roof: is the loop vectorised? Divide, clip (xsimd::clip) and "
            "round (xsimd::nearbyint) whole batches; keep the scalar loop for the tail.");
  perf.hint(0.8,
            "Vectorised, but the float-to-int8 store may go one lane at a time (xsimd 8 converts "
            "element by element: look at the disassembly). Section 4 of the handout shows the two "
            "AVX-512 instructions that convert and narrow 16 lanes at once.");
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
  perf.hint(0.4,
            "Far from the bandwidth roof: widen whole batches of bytes to floats (section 4 "
            "of the handout: xsimd converts one lane at a time).");
  perf.hint(0.8,
            "Close: the 256 MiB output is most of the traffic; each store first reads its cache "
            "line (read-for-ownership). Streaming stores (lab 01, step 6) avoid that.");
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
  perf.hint(0.5,
            "Far from the bandwidth roof: a batch of int8 holds 64 lanes with AVX-512; "
            "xsimd::max(batch, zero) does them all at once.");
  perf.hint(0.85, "Close: streaming stores (lab 01, step 6) skip the read of each output line.");
  perf.measure({.run = [&] { quantized_relu(q, out.span()); },
                .poison = [&] { out.poison(); },
                .verify = [&] { return lab04::oracle::check_quantized_relu(q, out); },
                .output = workbook::perf::output_of(out, workbook::Tolerance::exact())});
}
WORKBOOK_PERF_CASE(quantized_relu);

// The hints of the two products: where a kernel's speed puts it among the handout's versions.
void product_hints(workbook::perf::Case& perf) {
  perf.hint(
      0.02,
      "Very far from the int8 peak: like the handout's v1. Is the loop over k innermost, "
      "reading both rows contiguously (B is n x depth here)? Then let the compiler vectorise it.");
  perf.hint(0.15,
            "Vectorised, but one dot product at a time: each load feeds one multiply. Use vpdpbusd "
            "(step 7: 64 products per instruction) and compute several outputs per pass.");
  perf.hint(0.5,
            "A good start; the reference keeps a 6 x 64 tile of C in 24 registers, with B packed "
            "so the inner loop reads it in order and 4 bytes of each of A's 6 rows broadcast per "
            "step (step 8, the micro-kernel).");
  perf.hint(0.85,
            "Close to the reference: check that your micro-kernel's accumulators stay in "
            "registers (objdump -d: no loads or stores to the stack in the inner loop).");
}

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
  product_hints(perf);
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
  product_hints(perf);
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
