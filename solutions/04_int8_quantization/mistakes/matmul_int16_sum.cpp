// Mistake: the dot products summed in int16, which wraps past 32767.
// Checked by: MatmulInt8.SumsBeyondInt16AreExact
// Expect: your output matches the sum kept in int16, wrapping around past 32767
#include "quantize.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int16_t sum = 0;
      for (std::size_t k = 0; k < depth; ++k)
        sum = static_cast<std::int16_t>(sum + a[i * depth + k] * b[j * depth + k]);
      c[i * n + j] = sum;
    }
}

}  // namespace lab04
