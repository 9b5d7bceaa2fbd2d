// Mistake: the depth loop unrolled by 4, and the remainder loop started at k = 0, not where the
// unrolled loop stopped.
// Checked by: MatmulInt8.EverySmallShape
// Expect: in place of its last
// Expect: the remainder loop after the blocks starts again at k = 0
#include "quantize.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::int8_t* x = &a[i * depth];
      const std::int8_t* y = &b[j * depth];
      std::int32_t sum = 0;
      std::size_t k = 0;
      for (; k + 4 <= depth; k += 4)
        sum += x[k] * y[k] + x[k + 1] * y[k + 1] + x[k + 2] * y[k + 2] + x[k + 3] * y[k + 3];
      for (std::size_t t = 0; t < depth % 4; ++t) sum += x[t] * y[t];
      c[i * n + j] = sum;
    }
}

}  // namespace lab04
