// Mistake: the textbook A * B, with B read as depth x n, where B here is n x depth.
// Checked by: MatmulInt8.EverySmallShape
// Expect: your output matches A * B with B read as depth x n
#include "quantize.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      for (std::size_t k = 0; k < depth; ++k) sum += a[i * depth + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
}

}  // namespace lab04
