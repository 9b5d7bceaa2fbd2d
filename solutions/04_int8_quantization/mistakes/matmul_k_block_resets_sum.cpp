// Mistake: the depth in blocks of 64, each block's sum stored into C, not added to it.
// Checked by: MatmulInt8.EverySmallShape
// Expect: your output matches every sum over its last block of the depth only
#include "quantize.hpp"

#include <algorithm>

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  std::fill(c.begin(), c.end(), 0);
  for (std::size_t k0 = 0; k0 < depth; k0 += 64)
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        std::int32_t sum = 0;
        for (std::size_t k = k0; k < std::min(k0 + 64, depth); ++k)
          sum += a[i * depth + k] * b[j * depth + k];
        c[i * n + j] = sum;
      }
}

}  // namespace lab04
