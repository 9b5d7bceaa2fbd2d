// Mistake: inside a block of k, p counts from 0 and only B's index adds the block's start p0: every
// block multiplies its rows of B with A's first block of columns.
// Checked by: Matmul.LargeK
// Expect: multiplied with A's first block of columns: A's index leaves out the block's start p0
// Expect: A(i, p0 + p), a[i * lda + p0 + p]
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kBlock = 128;
  for (std::size_t i = 0; i < shape.m; ++i) std::fill_n(&c[i * shape.ldc], shape.n, 0.0f);
  for (std::size_t p0 = 0; p0 < shape.k; p0 += kBlock) {
    const std::size_t kc = std::min(kBlock, shape.k - p0);
    for (std::size_t i = 0; i < shape.m; ++i)
      for (std::size_t p = 0; p < kc; ++p) {
        const float aip = a[i * shape.lda + p];  // the mistake: p0 + p
        for (std::size_t j = 0; j < shape.n; ++j)
          c[i * shape.ldc + j] += aip * b[(p0 + p) * shape.ldb + j];
      }
  }
}

}  // namespace lab02
