// Mistake: rows of A stepped by n, C's width, instead of depth: right only where n == depth.
// Checked by: MatmulInt8.SquareTallAndWide
// Expect: your output matches the rows of A read n apart (a[i * n + k]) instead of depth apart
#include "quantize.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      for (std::size_t k = 0; k < depth; ++k) sum += std::int32_t{a[i * n + k]} * b[j * depth + k];
      c[i * n + j] = sum;
    }
}

}  // namespace lab04
