// Mistake: the i-k-j loops step between rows of B by ldc (C's leading dimension) instead of ldb.
// Checked by: Matmul.LeadingDimensionsLargerThanTheRows
// Expect: your output matches A * B with the rows of B read ldc apart instead of ldb
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i) {
    std::fill_n(&c[i * shape.ldc], shape.n, 0.0f);
    for (std::size_t p = 0; p < shape.k; ++p) {
      const float aip = a[i * shape.lda + p];
      for (std::size_t j = 0; j < shape.n; ++j) c[i * shape.ldc + j] += aip * b[p * shape.ldc + j];
    }
  }
}

}  // namespace lab02
