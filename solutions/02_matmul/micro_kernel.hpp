#pragma once
// The register-blocked micro-kernel of lab 02 (handout step 4), shared by v4, which feeds it A and
// B where they lie, and by the reference (v5), which feeds it packed panels.
//
// It computes one kMR x kNR tile of C over kc steps of p: the tile lives in kMR * kNV SIMD
// registers for the whole loop, so each step loads kNV batches of one row of B and kMR numbers of
// A, and does kMR * kNV FMAs with them. ikj (v2) does one FMA per load of C and store of C; this
// does 24 FMAs (with AVX-512) per 10 loads and no store at all until the end.
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab02::kernel {

using Batch = xsimd::batch<float>;

// Vector registers of the instruction set this build targets: 32 with AVX-512 and ARM64, 16 with
// AVX2 and SSE.
#if defined(__AVX512F__) || defined(__aarch64__)
inline constexpr std::size_t kRegisters = 32;
#else
inline constexpr std::size_t kRegisters = 16;
#endif

// The tile: kMR rows of kNV batches. Two constraints size it.
// - Registers: kMR * kNV accumulators, kNV batches of B and one broadcast of A must fit, or the
//   compiler spills accumulators to the stack: 6 * 4 + 4 + 1 = 29 of 32 registers with AVX-512
//   (a 6 x 64 tile), 6 * 2 + 2 + 1 = 15 of 16 with AVX2 (6 x 16).
// - Latency: an FMA's result is ready about 4 cycles after it starts, and a core starts two per
//   cycle, so kMinSums = 8 independent accumulators are the least that keep both FMA units busy;
//   24 (or 12) leave room, and each load of B or A now feeds 6 (or 4) FMAs instead of one.
inline constexpr std::size_t kMinSums = 8;
inline constexpr std::size_t kMR = 6;
inline constexpr std::size_t kNV = kRegisters == 32 ? 4 : 2;
inline constexpr std::size_t kNR = kNV * Batch::size;
// How many rows of B ahead the micro-kernel asks for (see micro_kernel).
inline constexpr std::size_t kRowsAhead = 16;

/// C[i][j] (+)= sum over p < kc of A(i, p) * B(p, j), for the tile's kMR rows and NV batches of
/// columns (all kNV of them, except in a narrow last tile), where
///   A(i, p) = a[i * a_row + p * a_step] and B(p, j) = b[p * b_step + j]:
/// A and B in place (a_row = lda, a_step = 1, b_step = ldb) or packed (a_row = 1, a_step = kMR,
/// b_step = kNR). With `accumulate` the tile is added to C, else it overwrites C, whose rows are
/// ldc apart.
template <std::size_t NV = kNV>
[[gnu::always_inline]] inline void micro_kernel(std::size_t kc, const float* a, std::size_t a_row,
                                                std::size_t a_step, const float* b,
                                                std::size_t b_step, float* c, std::size_t ldc,
                                                bool accumulate) {
  static_assert(NV >= 1 && NV <= kNV);
  // Ask for the tile of C now, though it is read only after the loop over p, whose thousands of
  // cycles then hide the wait: without this, each tile waited for C at its end, from the L3 or
  // DRAM (measured on Zen 5: 3% of a 2048^3 product, 2% at 1024^3). (1: for writing; 3: keep it
  // in every cache level.)
#pragma GCC unroll 16
  for (std::size_t i = 0; i < kMR; ++i)
#pragma GCC unroll 16
    for (std::size_t v = 0; v < NV; ++v) __builtin_prefetch(c + i * ldc + v * Batch::size, 1, 3);
  // A narrow tile (NV = 1: 6 sums) has fewer independent sums than the kMinSums that keep both
  // FMA units busy: it keeps two sets of them, for even and for odd p, added up after the loop
  // (about 1% of a 509 x 521 x 503 product, whose last 9 columns run such a tile).
  constexpr std::size_t kSets = kMR * NV >= kMinSums ? 1 : 2;
  Batch acc[kSets][kMR][NV];
  // The loops over the tile have constant bounds: fully unrolled, every acc[s][i][v] is a register.
#pragma GCC unroll 16
  for (std::size_t s = 0; s < kSets; ++s)
#pragma GCC unroll 16
    for (std::size_t i = 0; i < kMR; ++i)
#pragma GCC unroll 16
      for (std::size_t v = 0; v < NV; ++v) acc[s][i][v] = Batch(0.0f);
  // Step p: NV batches of row p of B, each times the kMR numbers of column p of A. The rows of B
  // stream from the L2 (the reference's micro-panel of B is 128 KiB or more): ask for row p +
  // kRowsAhead now, so that it is in the L1 when its step comes. Measured against no request, over
  // 3 x 31 rounds each beside OpenBLAS: 1.5-2.5% faster on the Xeon (8 rows ahead did as well, 32 a
  // little less), the same on Zen 5. Packed B only (b_step == kNR): on B in place (v4), its rows
  // ldb apart, the same requests made v4 up to a third slower on Zen 5.
  const bool rows_ahead = b_step == kNR;
  const auto step = [&](std::size_t p, Batch(&sums)[kMR][NV]) {
    if (rows_ahead && p + kRowsAhead < kc) {
#pragma GCC unroll 16
      for (std::size_t v = 0; v < NV; ++v)
        __builtin_prefetch(b + (p + kRowsAhead) * b_step + v * Batch::size, 0, 3);
    }
    Batch row_of_b[NV];
#pragma GCC unroll 16
    for (std::size_t v = 0; v < NV; ++v)
      row_of_b[v] = Batch::load_unaligned(b + p * b_step + v * Batch::size);
#pragma GCC unroll 16
    for (std::size_t i = 0; i < kMR; ++i) {
      const Batch a_ip(a[i * a_row + p * a_step]);  // one number of A, broadcast to every lane
#pragma GCC unroll 16
      for (std::size_t v = 0; v < NV; ++v) sums[i][v] = xsimd::fma(a_ip, row_of_b[v], sums[i][v]);
    }
  };
  std::size_t p = 0;
  for (; p + kSets <= kc; p += kSets)
#pragma GCC unroll 16
    for (std::size_t s = 0; s < kSets; ++s) step(p + s, acc[s]);
  for (; p < kc; ++p) step(p, acc[0]);
#pragma GCC unroll 16
  for (std::size_t s = 1; s < kSets; ++s)
#pragma GCC unroll 16
    for (std::size_t i = 0; i < kMR; ++i)
#pragma GCC unroll 16
      for (std::size_t v = 0; v < NV; ++v) acc[0][i][v] += acc[s][i][v];
#pragma GCC unroll 16
  for (std::size_t i = 0; i < kMR; ++i)
#pragma GCC unroll 16
    for (std::size_t v = 0; v < NV; ++v) {
      float* out = c + i * ldc + v * Batch::size;
      if (accumulate) acc[0][i][v] += Batch::load_unaligned(out);
      acc[0][i][v].store_unaligned(out);
    }
}

}  // namespace lab02::kernel
