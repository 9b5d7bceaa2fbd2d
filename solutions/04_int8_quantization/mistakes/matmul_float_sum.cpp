// Mistake: matmul_int8 sums the products in a float and casts the sum to int32: exact only up to
// 2^24.
// Checked by: MatmulInt8.SumsBeyondInt16AreExact
// Expect: your output matches the sum accumulated in float32
// Expect: accumulate in std::int32_t
#include "quantize.hpp"
#include "quantize_checks.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  checks::require_int8_product("matmul_int8", a, b, c.size(), m, n, depth);
  for (std::size_t i = 0; i < m; ++i) {
    const std::int8_t* a_row = &a[i * depth];
    for (std::size_t j = 0; j < n; ++j) {
      const std::int8_t* b_row = &b[j * depth];
      float sum = 0.0f;
      for (std::size_t k = 0; k < depth; ++k) {
        sum += static_cast<float>(a_row[k]) * static_cast<float>(b_row[k]);
      }
      c[i * n + j] = static_cast<std::int32_t>(sum);
    }
  }
}

}  // namespace lab04
