// v2 and v3 of the int8 product, its portable fallback, and v2 of quantize. v1 is in
// versions_scalar.cpp (compiled with the auto-vectoriser off), v4 in versions_avx2.cpp (compiled
// for AVX2 only).
#include "gcc_avx512_warnings.hpp"  // first: see inside

#include "int8_gemm.hpp"
#include "naive_loops.hpp"
#include "quantize_loops.hpp"
#include "versions.hpp"

#include "quantize_checks.hpp"

#include <workbook/require.hpp>

#include <algorithm>
#include <vector>

namespace lab04::versions {

void matmul_v2_autovectorized(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                              std::span<std::int32_t> c, std::size_t m, std::size_t n,
                              std::size_t depth) {
  // The same loops as v1; at -O3 -march=native GCC vectorises the inner dot product by itself
  // (sign-extending the bytes to int16 and multiplying pairs with vpmaddwd). Each byte it loads is
  // used once: every output reads its two rows again.
  checks::require_int8_product("matmul_int8", a, b, c.size(), m, n, depth);
  naive_product(a, b, c, m, n, depth);
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
namespace {

// The sum of the 16 int32 lanes, wrapping around as the instructions do. (_mm512_reduce_add_epi32
// is written with C++'s signed +, and with the +128 offset the lanes can pass 2^31 on the way.)
std::int32_t lane_sum(__m512i v) {
  const __m256i eight =
      _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  __m128i four = _mm_add_epi32(_mm256_castsi256_si128(eight), _mm256_extracti128_si256(eight, 1));
  four = _mm_add_epi32(four, _mm_shuffle_epi32(four, 0x4E));  // + the other half
  four = _mm_add_epi32(four, _mm_shuffle_epi32(four, 0xB1));  // + the neighbour
  return _mm_cvtsi128_si32(four);
}

// 4 rows of A against 4 rows of B, 64 bytes of depth per step: 8 loads feed 16 vpdpbusd, each
// register loaded is used 4 times. A is made unsigned on the fly (XOR 0x80 adds 128). At the end,
// each of the 16 accumulators is summed across its 16 lanes. A missing row (at the edge) repeats
// the last one; its results are not stored.
LAB04_MICRO_KERNEL void dot_4x4(const std::int8_t* const a[4], const std::int8_t* const b[4],
                                std::size_t depth, std::int32_t out[4][4]) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i acc[4][4];
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_si512();
  for (std::size_t k = 0; k < depth; k += 64) {
    // The last step loads only the bytes that exist (masked): the others are 0 in B, so they add 0.
    const __mmask64 mask = depth - k >= 64 ? ~__mmask64{0} : (__mmask64{1} << (depth - k)) - 1;
    __m512i rows[4], cols[4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r)
      rows[r] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, a[r] + k), flip);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) cols[c] = _mm512_maskz_loadu_epi8(mask, b[c] + k);
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], rows[r], cols[c]);
  }
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) out[r][c] = lane_sum(acc[r][c]);
}

}  // namespace

void matmul_v3_vpdpbusd_rows(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                             std::span<std::int32_t> c, std::size_t m, std::size_t n,
                             std::size_t depth) {
  checks::require_int8_product("matmul_int8", a, b, c.size(), m, n, depth);
  std::vector<std::int32_t> correction(n);  // -128 * the sum of each row of B (the offset trick)
  for (std::size_t j = 0; j < n; ++j) {
    std::int32_t sum = 0;
    for (std::size_t k = 0; k < depth; ++k) sum += b[j * depth + k];
    correction[j] = static_cast<std::int32_t>(0u - 128u * static_cast<std::uint32_t>(sum));
  }
  std::int32_t out[4][4];
  for (std::size_t i = 0; i < m; i += 4)
    for (std::size_t j = 0; j < n; j += 4) {
      const std::int8_t *rows[4], *cols[4];
      for (std::size_t r = 0; r < 4; ++r) rows[r] = a.data() + std::min(i + r, m - 1) * depth;
      for (std::size_t q = 0; q < 4; ++q) cols[q] = b.data() + std::min(j + q, n - 1) * depth;
      dot_4x4(rows, cols, depth, out);
      for (std::size_t r = 0; r < 4 && i + r < m; ++r)
        for (std::size_t q = 0; q < 4 && j + q < n; ++q)
          c[(i + r) * n + j + q] = gemm::corrected(out[r][q], correction[j + q]);
    }
}
#else
void matmul_v3_vpdpbusd_rows(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                             std::span<std::int32_t> c, std::size_t m, std::size_t n,
                             std::size_t depth) {
  matmul_v2_autovectorized(a, b, c, m, n, depth);  // no vpdpbusd on this machine
}
#endif

void matmul_portable_fallback(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                              std::span<std::int32_t> c, std::size_t m, std::size_t n,
                              std::size_t depth) {
  gemm::checked_multiply<gemm::Portable>("matmul_int8", a, b, c.size(), m, n, depth,
                                         gemm::StoreInt32<gemm::Portable::kCols>{c.data(), n});
}

const char* reference_kernel() {
  return gemm::Best::kName;  // compiled as quantize.cpp is: for this machine
}

void quantize_v2_xsimd_conversions(std::span<const float> x, float scale,
                                   std::span<std::int8_t> q) {
  // The reference's loop, with xsimd's own float-to-int8 store: one lane at a time.
  workbook::require_same_size("quantize", x.size(), "x", q.size(), "q");
  checks::require_scale("quantize", scale);
  loops::quantize<loops::Conversions::xsimd>(x, scale, q.data(), false, "quantize", 0);
}

void quantize_rows_v1_two_passes(std::span<const float> x, std::size_t cols,
                                 std::span<float> scales, std::span<std::int8_t> q) {
  // Each row's scale, then its values: the second pass reads the row from the cache, and memory
  // idles meanwhile.
  const std::size_t rows =
      checks::require_rows("quantize_rows", x.size(), cols, scales.size(), q.size());
  const bool large = q.size() >= loops::kStreamingBytes;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::span<const float> row = x.subspan(r * cols, cols);
    scales[r] = lab04::symmetric_scale(row);
    loops::quantize<loops::Conversions::native>(row, scales[r], q.data() + r * cols, large,
                                                "quantize_rows", r * cols);
  }
  if (large) workbook::stream_fence();
}

}  // namespace lab04::versions
