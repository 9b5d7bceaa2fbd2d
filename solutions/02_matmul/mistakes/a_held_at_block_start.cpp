// Mistake: the broadcast of A is read at the block's first column p0 for every p of the block: each
// block's rows of B, summed, are multiplied by one column of A.
// Checked by: Matmul.TinyShapes
// Expect: A's column 0 for every p: a[i][0] * b[p][j], A read at the block's start p0 instead of p
// Expect: a[i * lda + p]
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kBlock = 128;
  for (std::size_t i = 0; i < shape.m; ++i) std::fill_n(&c[i * shape.ldc], shape.n, 0.0f);
  for (std::size_t p0 = 0; p0 < shape.k; p0 += kBlock) {
    const std::size_t p_end = std::min(p0 + kBlock, shape.k);
    for (std::size_t i = 0; i < shape.m; ++i)
      for (std::size_t p = p0; p < p_end; ++p) {
        const float aip = a[i * shape.lda + p0];  // the mistake: p
        for (std::size_t j = 0; j < shape.n; ++j)
          c[i * shape.ldc + j] += aip * b[p * shape.ldb + j];
      }
  }
}

}  // namespace lab02
