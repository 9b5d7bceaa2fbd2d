// Self-test submission: the reference's matmul, which then uses the padding of A (the elements
// between the end of one row and the start of the next, when lda > k) as scratch, writing into a
// const input through a cast. C is right everywhere, and the visible test of the inputs (packed
// matrices: no padding) passes; the hidden tests compare A with a private copy, padding included,
// and fail, so matmul's visible and perf points are gated off and the function is flagged.
#include "matmul.hpp"

#include "micro_kernel.hpp"

#include <workbook/buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace lab02 {
namespace {

using kernel::kMR;
using kernel::kNR;

// Cache blocks, sized from this machine's caches (an AMD EPYC, Zen 5: L1d 48 KiB and L2 1 MiB per
// core, L3 shared; the probe finds memory's bandwidth only past 128 MiB), checked by measurement.
// - kKC, the depth of a block. The micro-kernel re-reads one micro-panel of B (kKC x kNR floats,
//   64 KiB with AVX-512) for each kMR rows of the A block: in L2, and fast enough from there, at
//   4 loads of B per 24 FMAs (kKC = 128 would keep it in L1, and measured no faster). A deeper
//   block loads and stores each tile of C less often: once per kKC steps, 0.4% of the loads at 256.
// - kMC, rows of the A block (kMC x kKC floats, 192 KiB): re-read for every micro-panel of B, so it
//   stays in L2; with that micro-panel, a quarter of the 1 MiB (kMC = 384 measured no faster).
// - kNC, columns of the B panel (kKC x kNC floats, 1 MiB): re-read for every block of A, so it
//   stays in L3. It also bounds the packing buffers for large n.
// kMC is a multiple of kMR and kNC of kNR, so only the last block of a matrix has partial tiles.
constexpr std::size_t kKC = 256;
constexpr std::size_t kMC = 32 * kMR;
constexpr std::size_t kNC = 1024 / kNR * kNR;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Copies the kc x nc block of B at b (rows ldb apart) into micro-panels of kNR columns: panel q
// holds columns q * kNR to q * kNR + kNR - 1 as kc rows of kNR contiguous floats, zero past column
// nc. The micro-kernel then reads one panel front to back, with no stride and no partial panel.
void pack_b(const float* b, std::size_t ldb, std::size_t kc, std::size_t nc, float* packed) {
  for (std::size_t j0 = 0; j0 < nc; j0 += kNR) {
    const std::size_t width = std::min(kNR, nc - j0);
    for (std::size_t p = 0; p < kc; ++p) {
      const float* row = b + p * ldb + j0;
      std::copy(row, row + width, packed);
      std::fill(packed + width, packed + kNR, 0.0f);
      packed += kNR;
    }
  }
}

// Copies the mc x kc block of A at a (rows lda apart) into micro-panels of kMR rows: panel r holds,
// for each p, the kMR numbers A(r * kMR + i, p) side by side (what the micro-kernel broadcasts at
// step p), zero past row mc.
void pack_a(const float* a, std::size_t lda, std::size_t mc, std::size_t kc, float* packed) {
  for (std::size_t i0 = 0; i0 < mc; i0 += kMR) {
    const std::size_t height = std::min(kMR, mc - i0);
    for (std::size_t i = 0; i < height; ++i) {
      const float* row = a + (i0 + i) * lda;
      for (std::size_t p = 0; p < kc; ++p) packed[p * kMR + i] = row[p];
    }
    for (std::size_t i = height; i < kMR; ++i)
      for (std::size_t p = 0; p < kc; ++p) packed[p * kMR + i] = 0.0f;
    packed += kMR * kc;
  }
}

// One tile of C from a micro-panel of A and one of B. A tile that sticks out of C (the last rows or
// columns) is computed in full into a local buffer, and only its part inside C is written: the zero
// padding of the panels made the extra rows and columns harmless, and C's padding stays untouched.
// A narrow last tile (9 columns of 64 when n = 521) runs a narrower kernel, NV batches wide,
// instead of multiplying mostly zeros: NV counts down from kNV, at compile time, to what it needs.
template <std::size_t NV = kernel::kNV>
void tile(std::size_t kc, const float* packed_a, const float* packed_b, float* c, std::size_t ldc,
          std::size_t rows, std::size_t cols, bool accumulate) {
  constexpr std::size_t width = NV * kernel::Batch::size;
  if constexpr (NV > 1) {
    if (cols <= width - kernel::Batch::size)
      return tile<NV - 1>(kc, packed_a, packed_b, c, ldc, rows, cols, accumulate);
  }
  if (rows == kMR && cols == width) {
    kernel::micro_kernel<NV>(kc, packed_a, 1, kMR, packed_b, kNR, c, ldc, accumulate);
    return;
  }
  alignas(64) float buffer[kMR * width];
  kernel::micro_kernel<NV>(kc, packed_a, 1, kMR, packed_b, kNR, buffer, width, false);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j)
      c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0.0f) + buffer[i * width + j];
}

// The reference's product (solutions/02_matmul/matmul.cpp), unchanged but for its name.
void product(std::span<const float> a, std::span<const float> b, std::span<float> c,
             const MatmulShape& shape) {
  const auto [m, n, k, lda, ldb, ldc] = shape;
  if (m == 0 || n == 0) return;
  if (k == 0) {  // empty sums: no block of k below writes C
    for (std::size_t i = 0; i < m; ++i) std::fill_n(c.data() + i * ldc, n, 0.0f);
    return;
  }
  // The packing buffers: 64-byte aligned, as large as the blocks this product needs.
  workbook::AlignedVector<float> packed_a(round_up(std::min(m, kMC), kMR) * std::min(k, kKC));
  workbook::AlignedVector<float> packed_b(std::min(k, kKC) * round_up(std::min(n, kNC), kNR));

  for (std::size_t jc = 0; jc < n; jc += kNC) {
    const std::size_t nc = std::min(kNC, n - jc);
    for (std::size_t pc = 0; pc < k; pc += kKC) {
      const std::size_t kc = std::min(kKC, k - pc);
      const bool accumulate = pc > 0;  // the first block of k overwrites C, the others add to it
      pack_b(b.data() + pc * ldb + jc, ldb, kc, nc, packed_b.data());
      for (std::size_t ic = 0; ic < m; ic += kMC) {
        const std::size_t mc = std::min(kMC, m - ic);
        pack_a(a.data() + ic * lda + pc, lda, mc, kc, packed_a.data());
        for (std::size_t jr = 0; jr < nc; jr += kNR) {
          for (std::size_t ir = 0; ir < mc; ir += kMR) {
            tile(kc, packed_a.data() + ir * kc, packed_b.data() + jr * kc,
                 c.data() + (ic + ir) * ldc + jc + jr, ldc, std::min(kMR, mc - ir),
                 std::min(kNR, nc - jr), accumulate);
          }
        }
      }
    }
  }
}

}  // namespace

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  product(a, b, c, shape);
  // "Scratch": the sum of each row of A, kept in the padding after the row (never after the last).
  if (shape.lda > shape.k)
    for (std::size_t i = 0; i + 1 < shape.m; ++i) {
      float* row = const_cast<float*>(a.data()) + i * shape.lda;
      float sum = 0.0f;
      for (std::size_t p = 0; p < shape.k; ++p) sum += row[p];
      row[shape.k] = sum;
    }
}

}  // namespace lab02
