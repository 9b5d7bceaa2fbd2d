// Mistake: the AVX2 route through vpmaddubsw (_mm256_maddubs_epi16), which adds each pair of
// u8 x s8 products with saturation to int16, fed A + 128: a pair beyond 32767 saturates. Written
// with the instruction's arithmetic, one pair at a time.
// Checked by: MatmulInt8.EverySmallShape
// Expect: your output matches pairs of (a + 128) * b products saturated to int16 (vpmaddubsw)
#include "quantize.hpp"

#include <algorithm>

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::int8_t* x = &a[i * depth];
      const std::int8_t* y = &b[j * depth];
      std::int32_t sum = 0, b_sum = 0;
      for (std::size_t k = 0; k < depth; k += 2) {
        int pair = (x[k] + 128) * y[k];
        if (k + 1 < depth) pair += (x[k + 1] + 128) * y[k + 1];
        sum += std::clamp(pair, -32768, 32767);  // vpmaddubsw's saturation
      }
      for (std::size_t k = 0; k < depth; ++k) b_sum += y[k];
      c[i * n + j] = sum - 128 * b_sum;
    }
}

}  // namespace lab04
