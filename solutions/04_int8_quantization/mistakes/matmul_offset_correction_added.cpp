// Mistake: the +128 offset of A corrected with the wrong sign: 128 * (sum of row j of B) added.
// Checked by: MatmulInt8.EverySmallShape
// Expect: (a + 128) * b with the correction added, not subtracted
#include "quantize.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0, b_sum = 0;
      for (std::size_t k = 0; k < depth; ++k) {
        sum += (a[i * depth + k] + 128) * b[j * depth + k];
        b_sum += b[j * depth + k];
      }
      c[i * n + j] = sum + 128 * b_sum;
    }
}

}  // namespace lab04
