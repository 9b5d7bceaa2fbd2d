// Mistake: the products added to C as it was, never set to zero first.
// Checked by: MatmulInt8.OverwritesStaleOutput
// Expect: off by the same constant, 1000
#include "quantize.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t k = 0; k < depth; ++k) c[i * n + j] += a[i * depth + k] * b[j * depth + k];
}

}  // namespace lab04
