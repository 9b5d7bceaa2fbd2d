// Lab 02 performance spec: what each perf test times, the work the roofline counts, and advice.
// `ctest --preset lab02 -L perf` compares your matmul with the reference, interleaved; run
// `build/lab02/labs/02_matmul/lab02_perf` to time yours alone against the ceilings.
//
// Two cases, and what they cost (measured on a shared 2-core machine; faster when it is idle):
// - matmul, 1024^3: the size the lab's targets are stated at. The reference takes about 11 ms a
//   call and the test about 5 s. A naive i-j-k kernel takes 5 to 8 s a call, and its test a minute
//   and a half: a kernel found too slow is timed again with fresh processes before the verdict.
// - matmul_primes, 509 x 521 x 503: an eighth of the work, on sizes that are no multiple of any
//   block, so that the leftover rows and columns show. Quick feedback while you work: 1.4 ms a call
//   for the reference, about 0.1 s for a naive kernel, 5 to 10 s per test either way.
// (The lab's bench also times matmul_2048, below: no perf test, a size for the handout's table.)
// The case calls matmul through perf.timed(lab02::matmul): here that is yours (or the reference's);
// the bench times the handout's numbered versions in its place, on the same inputs.
// The inputs (12 MiB at 1024^3) stay in the caches between calls, as they would between two calls
// of a network layer: a product reuses each number of A and B a thousand times, so where the first
// use finds it changes a call's time by a few percent at most. What is measured is the arithmetic.
#include "matmul.hpp"
#include "matmul_oracle.hpp"

#include <workbook/buffer.hpp>
#include <workbook/perf.hpp>

#include <optional>
#include <string>

#if defined(LAB02_HAVE_OPENBLAS)
#include <cblas.h>
#endif

namespace {

using lab02::MatmulShape;
using workbook::AlignedVector;

// What a kernel's speed says about it: which version of the handout it resembles (their fractions
// of the FMA peak as the bench measured them, README.md section 1) and the step that comes next.
void add_hints(workbook::perf::Case& perf, const std::string& leftovers) {
  perf.hint(
      0.05,
      "About as fast as the handout's v1 (naive i-j-k, 0.2% of the FMA peak) or the seed's "
      "blocking (0.9%): the innermost loop walks down a column of B, one float per cache line, and "
      "adds into one scalar sum that waits for the previous addition. Reorder the loops to i-k-j "
      "(step 2): the innermost loop then runs along rows of B and C, and the compiler vectorises "
      "it (v2: 19% of the peak).");
  perf.hint(
      0.4,
      "About as fast as v2 (i-k-j, 19% of the peak) or v3 (cache-blocked, 20-30%): vectorised, but "
      "each FMA loads a batch of C and stores it back, so moving C binds long before the FMA units "
      "do. Register blocking (step 4): keep a tile of C, 6 rows x 4 batches with AVX-512, in 24 "
      "Batch accumulators while p runs, broadcasting A(i, p) with Batch(a_ip); store the tile once "
      "at the end.");
  perf.hint(
      0.7,
      "Register-blocked, perhaps, but short of v4 (88% of the peak): check that the whole tile "
      "stays in registers (objdump -d lab02_perf: no loads or stores of accumulators inside the p "
      "loop), that it has at least 8 independent accumulators (2 FMA units x 4 cycles of latency), "
      "and that the block of B your tiles walk stays in the L2 (step 3)." +
          leftovers);
  perf.hint(
      0.85,
      "Close to the reference (v5, 87-91% of the peak): pack each block of A and B into "
      "contiguous, zero-padded micro-panels (step 5), so that the micro-kernel reads them front to "
      "back and does every tile, the last ones too; then check your block sizes against the "
      "handout's." +
          leftovers);
}

#if defined(LAB02_HAVE_OPENBLAS)
std::string openblas_label() {
  return std::string("OpenBLAS sgemm, 1 thread (") + openblas_get_corename() + " kernels)";
}
#endif

void product(workbook::perf::Case& perf, const MatmulShape& s, const std::string& about,
             const std::string& leftovers) {
  AlignedVector<float> a(s.m * s.k), b(s.k * s.n);
  workbook::fill_uniform(a, perf.rng());
  workbook::fill_uniform(b, perf.rng());
  workbook::GuardedBuffer<float> c = lab02::oracle::output_for(s);
  const auto matmul = perf.timed(lab02::matmul);
  perf.describe("matmul", about);
  // One FMA (2 FLOP) for each of the m n k terms. Bytes: the least any kernel moves, each of A and
  // B read once and C written once; at 1024^3 that is 170 FLOP per byte, far right of the ridge
  // point (about 4): compute bound, and the roof is the measured FMA peak of one core.
  const workbook::Work work{.ops = 2.0 * double(s.m) * double(s.n) * double(s.k),
                            .bytes = 4.0 * double(s.m * s.k + s.k * s.n + s.m * s.n),
                            .traffic = workbook::Traffic::triad};
  perf.work(work);
  add_hints(perf, leftovers);
#if defined(LAB02_HAVE_OPENBLAS)
  // The library a user would call instead, timed in the reference's worker and shown beside you.
  AlignedVector<float> c_library(s.m * s.n);
  openblas_set_num_threads(1);
  perf.extra({.label = openblas_label(),
              .side = workbook::perf::Extra::Side::library,
              .run =
                  [&] {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n),
                                int(s.k), 1.0f, a.data(), int(s.lda), b.data(), int(s.ldb), 0.0f,
                                c_library.data(), int(s.ldc));
                  },
              .work = work});
#endif
  std::optional<lab02::oracle::Product> want;  // computed at the first use: half a second at 1024^3
  auto oracle = [&]() -> const lab02::oracle::Product& {
    if (!want) want = lab02::oracle::multiply(a, b, s);
    return *want;
  };
  perf.measure(
      {.run = [&] { matmul(a, b, c.span(), s); },
       .poison = [&] { c.poison(); },
       .verify = [&] { return lab02::oracle::check(oracle(), c, s); },
       // The bound of the check: gamma_k times sum_p |a_ip| |b_pj| (C is packed: ldc = n).
       .output = workbook::perf::output_of(c, workbook::Tolerance::sum_of(s.k),
                                           [&](std::size_t i) { return oracle().scale[i]; })});
}

void matmul(workbook::perf::Case& perf) {
  product(perf, MatmulShape::packed(1024, 1024, 1024),
          "C = A * B, 1024 x 1024 x 1024 floats, one thread", "");
}
WORKBOOK_PERF_CASE(matmul);

void matmul_primes(workbook::perf::Case& perf) {
  product(
      perf, MatmulShape::packed(509, 521, 503),
      "C = A * B, 509 x 521 x 503 floats (primes), one thread",
      " Here the sizes are primes: with 6 x 64 tiles the last 5 rows and 9 columns are leftovers, "
      "2.7% of C. v4 computes them with the i-k-j loop, on rows of 9, and spends 40% of its time "
      "there (51% of the peak on this case, against 88% at 1024^3).");
}
WORKBOOK_PERF_CASE(matmul_primes);

// For the bench only (no perf test): 2048^3, larger than the L2 many times over, where cache
// blocking pays, and packing. About 90 ms a call for the reference.
void matmul_2048(workbook::perf::Case& perf) {
  product(perf, MatmulShape::packed(2048, 2048, 2048),
          "C = A * B, 2048 x 2048 x 2048 floats, one thread", "");
}
WORKBOOK_BENCH_CASE(matmul_2048);

}  // namespace
