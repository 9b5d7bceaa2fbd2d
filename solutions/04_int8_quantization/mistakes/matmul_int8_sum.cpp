// Mistake: the sum declared with the inputs' type, int8, which wraps past 127.
// Checked by: MatmulInt8.EverySmallShape
// Expect: your output matches the sum kept in int8, wrapping around past 127
#include "quantize.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int8_t sum = 0;
      for (std::size_t k = 0; k < depth; ++k)
        sum = static_cast<std::int8_t>(sum + a[i * depth + k] * b[j * depth + k]);
      c[i * n + j] = sum;
    }
}

}  // namespace lab04
