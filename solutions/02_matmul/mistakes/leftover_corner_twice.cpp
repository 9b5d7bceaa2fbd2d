// Mistake: a blocked matmul whose leftover-columns pass runs over every row and whose leftover-rows
// pass runs over every column: the corner where they meet is added into C twice.
// Checked by: Matmul.PrimeShapes
// Expect: exactly twice
// Expect: both cover the corner where they meet
// Lab 02: my implementation (step 4: cache blocks over k and j, a 6 x (4 batches) register tile,
// leftovers through the i-k-j loop).
#include "matmul.hpp"

#include <algorithm>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab02 {

using Batch = xsimd::batch<float>;

namespace {
constexpr std::size_t KC = 256;  // rows of B per block
constexpr std::size_t NC = 512;  // columns of B per block
constexpr std::size_t MR = 6;    // rows of the register tile
constexpr std::size_t NV = 4;    // batches per row of the register tile
constexpr std::size_t W = Batch::size;
constexpr std::size_t NR = NV * W;  // columns of the register tile

// C[i0..i1, j0..j1] += A[i0..i1, p0..p1] * B[p0..p1, j0..j1], loop order i-k-j.
void ikj(const float* a, const float* b, float* c, std::size_t lda, std::size_t ldb,
         std::size_t ldc, std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1,
         std::size_t p0, std::size_t p1) {
  for (std::size_t i = i0; i < i1; ++i) {
    float* c_row = c + i * ldc;
    for (std::size_t p = p0; p < p1; ++p) {
      const float a_ip = a[i * lda + p];
      const Batch a_b(a_ip);
      const float* b_row = b + p * ldb;
      std::size_t j = j0;
      for (; j + W <= j1; j += W) {
        Batch acc = Batch::load_unaligned(c_row + j);
        acc = xsimd::fma(a_b, Batch::load_unaligned(b_row + j), acc);
        acc.store_unaligned(c_row + j);
      }
      for (; j < j1; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
}

// The MR x NR tile of C at (i0, j0) += A[i0.., p0..p1] * B[p0..p1, j0..].
void micro_kernel(const float* a, const float* b, float* c, std::size_t lda, std::size_t ldb,
                  std::size_t ldc, std::size_t i0, std::size_t j0, std::size_t p0, std::size_t p1) {
  Batch acc[MR][NV];
  for (std::size_t i = 0; i < MR; ++i)
    for (std::size_t v = 0; v < NV; ++v) acc[i][v] = Batch(0.0f);
  for (std::size_t p = p0; p < p1; ++p) {
    Batch b_row[NV];
    for (std::size_t v = 0; v < NV; ++v) b_row[v] = Batch::load_unaligned(b + p * ldb + j0 + v * W);
    for (std::size_t i = 0; i < MR; ++i) {
      const Batch a_ip(a[(i0 + i) * lda + p]);
      for (std::size_t v = 0; v < NV; ++v) acc[i][v] = xsimd::fma(a_ip, b_row[v], acc[i][v]);
    }
  }
  for (std::size_t i = 0; i < MR; ++i) {
    float* c_row = c + (i0 + i) * ldc + j0;
    for (std::size_t v = 0; v < NV; ++v)
      (Batch::load_unaligned(c_row + v * W) + acc[i][v]).store_unaligned(c_row + v * W);
  }
}
}  // namespace

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  const std::size_t m = shape.m, n = shape.n, k = shape.k;
  const std::size_t lda = shape.lda, ldb = shape.ldb, ldc = shape.ldc;

  // C is overwritten: zero it first (only the m x n part, not the padding).
  for (std::size_t i = 0; i < m; ++i) {
    std::fill(c.begin() + i * ldc, c.begin() + i * ldc + n, 0.0f);
  }

  const float* pa = a.data();
  const float* pb = b.data();
  float* pc = c.data();
  const std::size_t m_tiles = m / MR * MR;  // rows covered by whole tiles

  for (std::size_t j0 = 0; j0 < n; j0 += NC) {
    const std::size_t j_end = std::min(j0 + NC, n);
    const std::size_t j_tiles = j0 + (j_end - j0) / NR * NR;  // columns covered by whole tiles
    for (std::size_t p0 = 0; p0 < k; p0 += KC) {
      const std::size_t p_end = std::min(p0 + KC, k);
      for (std::size_t i0 = 0; i0 < m_tiles; i0 += MR) {
        for (std::size_t j = j0; j < j_tiles; j += NR) {
          micro_kernel(pa, pb, pc, lda, ldb, ldc, i0, j, p0, p_end);
        }
      }
      // leftover columns, then the leftover rows
      ikj(pa, pb, pc, lda, ldb, ldc, 0, m, j_tiles, j_end, p0, p_end);
      ikj(pa, pb, pc, lda, ldb, ldc, m_tiles, m, j0, j_end, p0, p_end);
    }
  }
}

}  // namespace lab02
