// Lab 02 reference (v5): cache blocking, packing, and a register-blocked xsimd micro-kernel, in the
// loop structure of BLIS (Van Zee and van de Geijn, "BLIS: A Framework for Rapidly Instantiating
// BLAS Functionality", 2015). The earlier versions are in versions.cpp; the handout explains each.
//
//   for ic: rows of A and C, mc at a time
//     for pc: k, kc at a time            pack A(ic.., pc..) into micro-panels of kMR rows (L3)
//       for jc: columns of B and C, nc   pack B(pc.., jc..) into micro-panels of kNR columns (L2)
//         for ir: one micro-panel of A   (it stays in the L1)
//           for jr: one micro-panel of B -> micro_kernel: a kMR x kNR tile of C
//
// BLIS writes a column-major C; for this row-major one, A and B swap places (C^T = B^T A^T): the
// operand whose numbers the kernel broadcasts (here A) keeps its micro-panel in the L1, the one
// whose rows it loads as vectors (here B) streams its block from the L2.
#include "matmul.hpp"

#include "blocking.hpp"
#include "micro_kernel.hpp"

#include <workbook/buffer.hpp>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <thread>

namespace lab02 {
namespace {

using kernel::kMR;
using kernel::kNR;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::size_t round_down(std::size_t value, std::size_t multiple) {
  return std::max(multiple, value / multiple * multiple);
}

// Copies the kc x nc block of B at b (rows ldb apart) into micro-panels of kNR columns: panel q
// holds columns q * kNR to q * kNR + kNR - 1 as kc rows of kNR contiguous floats, zero past column
// nc. The micro-kernel then reads one panel front to back, with no stride and no partial panel.
void pack_b(const float* b, std::size_t ldb, std::size_t kc, std::size_t nc, float* packed) {
  using kernel::Batch;
  for (std::size_t j0 = 0; j0 < nc; j0 += kNR) {
    const std::size_t width = std::min(kNR, nc - j0);
    for (std::size_t p = 0; p < kc; ++p, packed += kNR) {
      const float* row = b + p * ldb + j0;
      if (width == kNR) {  // a whole row of the panel: kNV batches, no call to memmove
        for (std::size_t v = 0; v < kernel::kNV; ++v)
          Batch::load_unaligned(row + v * Batch::size).store_aligned(packed + v * Batch::size);
      } else {
        std::copy(row, row + width, packed);
        std::fill(packed + width, packed + kNR, 0.0f);
      }
    }
  }
}

#if defined(__AVX512F__)
// Packing A is a transposition: kMR rows in, kMR numbers per step of p out. With AVX-512 it takes
// 16 steps at a time: 6 loads of 16 numbers, 18 permutes, 6 stores of 16, where the scalar loop in
// pack_a makes 96 loads and 96 stores. First the two rows of each pair (0-1, 2-3, 4-5) are
// interleaved, so that a pair's two numbers at step p form one 64-bit word; then the three pairs'
// words are interleaved into the panel's order: step 0's three words, step 1's, ...
static_assert(kMR == 6);
struct PackAIndices {
  // pair[h]: lane 2j + s takes step 8h + j of the pair's row s (indices 16 and up pick the second
  // row).
  alignas(64) std::int32_t pair[2][16] = {};
  // Word l of output vector k (of 3 per 8 steps) is word t = 8k + l of those steps: step t / 3 of
  // pair t % 3. Pairs 0 and 1 come from two sources (word j of pair 1 is index 8 + j), pair 2 from
  // a masked third permute, which overwrites the lanes first_two leaves at 0.
  alignas(64) std::int64_t first_two[3][8] = {}, third[3][8] = {};
  __mmask8 third_lanes[3] = {};
  constexpr PackAIndices() {
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 8; ++j)
        for (int s = 0; s < 2; ++s) pair[h][2 * j + s] = 16 * s + 8 * h + j;
    for (int k = 0; k < 3; ++k)
      for (int l = 0; l < 8; ++l) {
        const int t = 8 * k + l, step = t / 3, pair_of_rows = t % 3;
        if (pair_of_rows < 2) {
          first_two[k][l] = 8 * pair_of_rows + step;
        } else {
          third[k][l] = step;
          third_lanes[k] = static_cast<__mmask8>(third_lanes[k] | (1u << l));
        }
      }
  }
};
inline constexpr PackAIndices kPackA;

// Steps p to p + 15 of the 6 rows, into packed (96 floats, in the panel's order).
void pack_a_16_steps(const float* const rows[kMR], std::size_t p, float* packed) {
  __m512i words[3][2];  // words[q][h]: pair q's 64-bit words for steps 8h .. 8h + 7
  for (int q = 0; q < 3; ++q) {
    const __m512 first = _mm512_loadu_ps(rows[2 * q] + p),
                 second = _mm512_loadu_ps(rows[2 * q + 1] + p);
    for (int h = 0; h < 2; ++h)
      words[q][h] = _mm512_castps_si512(
          _mm512_permutex2var_ps(first, _mm512_load_si512(kPackA.pair[h]), second));
  }
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 3; ++k) {
      __m512i out = _mm512_permutex2var_epi64(words[0][h], _mm512_load_si512(kPackA.first_two[k]),
                                              words[1][h]);
      out = _mm512_mask_permutexvar_epi64(out, kPackA.third_lanes[k],
                                          _mm512_load_si512(kPackA.third[k]), words[2][h]);
      _mm512_storeu_si512(packed + (3 * h + k) * 16, out);
    }
}
#endif

// Copies the mc x kc block of A at a (rows lda apart) into micro-panels of kMR rows: panel r holds,
// for each p, the kMR numbers A(r * kMR + i, p) side by side (what the micro-kernel broadcasts at
// step p), zero past row mc. The loop over p is the outer one, so that the panel is written front
// to back while kMR rows are read side by side (a row at a time, the writes are kMR floats apart:
// 4-5% of a 2048^3 product). With AVX-512, 16 steps at a time (pack_a_16_steps): 1% faster on the
// primes on both Xeons (medians of 6 runs against OpenBLAS, 0.99x -> 1.00x on the GPU machine's).
void pack_a(const float* a, std::size_t lda, std::size_t mc, std::size_t kc, float* packed) {
  for (std::size_t i0 = 0; i0 < mc; i0 += kMR, packed += kMR * kc) {
    const std::size_t height = std::min(kMR, mc - i0);
    const float* rows[kMR];  // a short last panel copies its last row again, zeroed below
    for (std::size_t i = 0; i < kMR; ++i) rows[i] = a + (i0 + std::min(i, height - 1)) * lda;
    std::size_t p = 0;
#if defined(__AVX512F__)
    for (; p + 16 <= kc; p += 16) pack_a_16_steps(rows, p, packed + p * kMR);
#endif
    for (; p < kc; ++p)
#pragma GCC unroll 16
      for (std::size_t i = 0; i < kMR; ++i) packed[p * kMR + i] = rows[i][p];
    for (std::size_t i = height; i < kMR; ++i)
      for (std::size_t step = 0; step < kc; ++step) packed[step * kMR + i] = 0.0f;
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

}  // namespace

// The blocks, after BLIS's analytical model (Low, Igual, Smith and Quintana-Orti, "Analytical
// Modeling Is Enough for High-Performance BLIS", 2016): each block is sized to stay in the cache
// that serves it, with room left for the data streaming past it. With AVX-512 they give kc = 512,
// nc = 128, mc = 4092 on our Zen 5 virtual machine (48 KiB of L1, 1 MiB of L2, the host's L3), and
// kc = 512, nc = 256 on a Xeon's core (2 MiB of L2).
Blocks blocks_for(const workbook::CacheSizes& caches, unsigned cores) {
  // Where the OS reports nothing, small caches: 32 KiB of L1, 256 KiB of L2, 1 MiB of L3 per core.
  const std::size_t l1 = caches.l1d > 0 ? caches.l1d : std::size_t{32} << 10;
  const std::size_t l2 = caches.l2 > 0 ? caches.l2 : std::size_t{256} << 10;
  const std::size_t l3_share =
      caches.l3 > 0 ? caches.l3 / std::max(1u, cores) : std::size_t{1} << 20;
  Blocks blocks;
  // kc: one micro-panel of A (kMR x kc floats) is read again for each micro-panel of B along its
  // row of tiles: it stays in the L1, a quarter of it, beside the rows of B and the tiles of C
  // going by. Deep blocks also load and store each tile of C less often (once per kc steps of p).
  // Measured: on Zen 5, kc = 384 to 768 ran within 2% of each other; on the Xeon, 512 and 1024
  // (half its L1) ran the same within the host's noise (3 runs).
  blocks.kc = std::clamp<std::size_t>(l1 / 4 / (kMR * sizeof(float)), 64, 1024);
  // nc: the block of B (kc x nc floats) is read again for every micro-panel of A: it stays in the
  // L2, a quarter of it.
  blocks.nc = round_down(l2 / 4 / (blocks.kc * sizeof(float)), kNR);
  // mc: the block of A (mc x kc floats) is read again for every block of B, from the L3: half of
  // one core's share of it, at most 8 MiB, since a virtual machine may report its host's whole L3
  // (508 MiB on our Zen 5). A tall block also packs B fewer times: once per block of A.
  const std::size_t block_bytes = std::min(l3_share / 2, std::size_t{8} << 20);
  blocks.mc = round_down(block_bytes / (blocks.kc * sizeof(float)), kMR);
  return blocks;
}

const Blocks& this_machines_blocks() {
  static const Blocks blocks =
      blocks_for(workbook::cache_sizes(), std::max(1u, std::thread::hardware_concurrency()));
  return blocks;
}

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  matmul_in_blocks(a, b, c, shape, this_machines_blocks());
}

void matmul_in_blocks(std::span<const float> a, std::span<const float> b, std::span<float> c,
                      const MatmulShape& shape, const Blocks& blocks) {
  require_valid_arguments(a, b, c, shape);
  const auto [m, n, k, lda, ldb, ldc] = shape;
  if (m == 0 || n == 0) return;
  if (k == 0) {  // empty sums: no block of k below writes C
    for (std::size_t i = 0; i < m; ++i) std::fill_n(c.data() + i * ldc, n, 0.0f);
    return;
  }
  if (blocks.kc == 0 || blocks.mc == 0 || blocks.nc == 0)
    throw std::invalid_argument("matmul_in_blocks: every block needs at least one row and column");
  const auto [kc_max, mc_max, nc_max] = blocks;
  // The packing buffers, 64-byte aligned, kept between calls: not allocated, and their pages not
  // faulted in, again on every call.
  thread_local workbook::AlignedVector<float> packed_a, packed_b;
  packed_a.resize(round_up(std::min(m, mc_max), kMR) * std::min(k, kc_max));
  packed_b.resize(std::min(k, kc_max) * round_up(std::min(n, nc_max), kNR));

  for (std::size_t ic = 0; ic < m; ic += mc_max) {
    const std::size_t mc = std::min(mc_max, m - ic);
    for (std::size_t pc = 0; pc < k; pc += kc_max) {
      const std::size_t kc = std::min(kc_max, k - pc);
      const bool accumulate = pc > 0;  // the first block of k overwrites C, the others add to it
      pack_a(a.data() + ic * lda + pc, lda, mc, kc, packed_a.data());
      for (std::size_t jc = 0; jc < n; jc += nc_max) {
        const std::size_t nc = std::min(nc_max, n - jc);
        pack_b(b.data() + pc * ldb + jc, ldb, kc, nc, packed_b.data());
        for (std::size_t ir = 0; ir < mc; ir += kMR) {
          for (std::size_t jr = 0; jr < nc; jr += kNR) {
            tile(kc, packed_a.data() + ir * kc, packed_b.data() + jr * kc,
                 c.data() + (ic + ir) * ldc + jc + jr, ldc, std::min(kMR, mc - ir),
                 std::min(kNR, nc - jr), accumulate);
          }
        }
      }
    }
  }
}

}  // namespace lab02
