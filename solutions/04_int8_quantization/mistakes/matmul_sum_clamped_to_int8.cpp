// Mistake: each int32 sum is clamped to the int8 range before it is stored, as if C held int8.
// Checked by: MatmulInt8.SquareTallAndWide
// Expect: your output matches each int32 sum stored clamped to the int8 range [-128, 127]
#include "quantize.hpp"

#include <algorithm>

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      for (std::size_t k = 0; k < depth; ++k)
        sum += std::int32_t{a[i * depth + k]} * b[j * depth + k];
      c[i * n + j] = std::clamp(sum, -128, 127);
    }
}

}  // namespace lab04
