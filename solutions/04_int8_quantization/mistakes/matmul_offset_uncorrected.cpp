// Mistake: 128 added to A to make it unsigned (for vpdpbusd), and never subtracted back.
// Checked by: MatmulInt8.EverySmallShape
// Expect: your output matches (a + 128) * b without the correction
#include "quantize.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      for (std::size_t k = 0; k < depth; ++k) {
        const std::uint8_t unsigned_a = static_cast<std::uint8_t>(a[i * depth + k] + 128);
        sum += unsigned_a * b[j * depth + k];
      }
      c[i * n + j] = sum;
    }
}

}  // namespace lab04
