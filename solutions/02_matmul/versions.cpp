// Lab 02's versions before the reference, one step of the handout each. The reference, v5, is
// matmul.cpp; the micro-kernel v4 and v5 share is micro_kernel.hpp.
#include "versions.hpp"

#include "micro_kernel.hpp"

#include <algorithm>
#include <cstddef>

namespace lab02::versions {
namespace {

void zero(std::span<float> c, const MatmulShape& s) {
  for (std::size_t i = 0; i < s.m; ++i) std::fill_n(c.data() + i * s.ldc, s.n, 0.0f);
}

// C(i, j) += sum over p in [p0, p1) of A(i, p) B(p, j), for i in [i0, i1) and j in [j0, j1), in
// i-k-j order: the innermost loop streams along a row of B and a row of C, one FMA per element, and
// GCC vectorises it (with a runtime check that the two rows do not overlap).
void add_block_ikj(const float* a, const float* b, float* c, const MatmulShape& s, std::size_t i0,
                   std::size_t i1, std::size_t j0, std::size_t j1, std::size_t p0, std::size_t p1) {
  for (std::size_t i = i0; i < i1; ++i) {
    float* c_row = c + i * s.ldc;
    for (std::size_t p = p0; p < p1; ++p) {
      const float a_ip = a[i * s.lda + p];
      const float* b_row = b + p * s.ldb;
      for (std::size_t j = j0; j < j1; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
}

// v3's and v4's blocks of B: kKC rows x kNC columns, 512 KiB, half of this machine's 1 MiB L2, so
// that the block stays there while every row of A passes over it (the other half is for the rows
// of A and C in flight). v4 loses 15% if the block is twice that (it then spills to L3).
constexpr std::size_t kKC = 128;
constexpr std::size_t kNC = 1024;

}  // namespace

void matmul_v1_naive(std::span<const float> a, std::span<const float> b, std::span<float> c,
                     const MatmulShape& s) {
  require_valid_arguments(a, b, c, s);
  for (std::size_t i = 0; i < s.m; ++i)
    for (std::size_t j = 0; j < s.n; ++j) {
      // One dot product: a row of A against a column of B, whose elements lie ldb floats apart.
      float sum = 0.0f;
      for (std::size_t p = 0; p < s.k; ++p) sum += a[i * s.lda + p] * b[p * s.ldb + j];
      c[i * s.ldc + j] = sum;
    }
}

void matmul_v2_ikj(std::span<const float> a, std::span<const float> b, std::span<float> c,
                   const MatmulShape& s) {
  require_valid_arguments(a, b, c, s);
  zero(c, s);
  add_block_ikj(a.data(), b.data(), c.data(), s, 0, s.m, 0, s.n, 0, s.k);
}

void matmul_seed_blocked(std::span<const float> a, std::span<const float> b, std::span<float> c,
                         const MatmulShape& s) {
  require_valid_arguments(a, b, c, s);
  constexpr std::size_t bs = 32;  // the seed's block size, for all three loops
  zero(c, s);
  for (std::size_t ii = 0; ii < s.m; ii += bs)
    for (std::size_t jj = 0; jj < s.n; jj += bs)
      for (std::size_t kk = 0; kk < s.k; kk += bs)
        for (std::size_t i = ii; i < std::min(ii + bs, s.m); ++i)
          for (std::size_t j = jj; j < std::min(jj + bs, s.n); ++j) {
            float sum = c[i * s.ldc + j];
            for (std::size_t p = kk; p < std::min(kk + bs, s.k); ++p)
              sum += a[i * s.lda + p] * b[p * s.ldb + j];
            c[i * s.ldc + j] = sum;
          }
}

void matmul_v3_blocked(std::span<const float> a, std::span<const float> b, std::span<float> c,
                       const MatmulShape& s) {
  require_valid_arguments(a, b, c, s);
  zero(c, s);
  for (std::size_t jc = 0; jc < s.n; jc += kNC)
    for (std::size_t pc = 0; pc < s.k; pc += kKC)
      add_block_ikj(a.data(), b.data(), c.data(), s, 0, s.m, jc, std::min(jc + kNC, s.n), pc,
                    std::min(pc + kKC, s.k));
}

void matmul_v4_register_blocked(std::span<const float> a, std::span<const float> b,
                                std::span<float> c, const MatmulShape& s) {
  using kernel::kMR;
  using kernel::kNR;
  require_valid_arguments(a, b, c, s);
  zero(c, s);
  const std::size_t m_tiles = s.m / kMR * kMR;  // rows covered by whole tiles
  for (std::size_t jc = 0; jc < s.n; jc += kNC) {
    const std::size_t j_end = std::min(jc + kNC, s.n);
    const std::size_t j_tiles = jc + (j_end - jc) / kNR * kNR;  // columns covered by whole tiles
    for (std::size_t pc = 0; pc < s.k; pc += kKC) {
      const std::size_t kc = std::min(kKC, s.k - pc);
      for (std::size_t i = 0; i < m_tiles; i += kMR)
        for (std::size_t j = jc; j < j_tiles; j += kNR)
          kernel::micro_kernel(kc, a.data() + i * s.lda + pc, s.lda, 1, b.data() + pc * s.ldb + j,
                               s.ldb, c.data() + i * s.ldc + j, s.ldc, /*accumulate=*/true);
      // The leftovers, with v3's loop: the columns right of the last whole tile, then the rows
      // below.
      add_block_ikj(a.data(), b.data(), c.data(), s, 0, m_tiles, j_tiles, j_end, pc, pc + kc);
      add_block_ikj(a.data(), b.data(), c.data(), s, m_tiles, s.m, jc, j_end, pc, pc + kc);
    }
  }
}

}  // namespace lab02::versions
