// Mistake: the rows of B are stepped by n instead of ldb (only right without padding).
// Checked by: Matmul.LeadingDimensionsLargerThanTheRows
// Expect: your output matches A * B with the rows of B read n apart instead of ldb
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t j = 0; j < shape.n; ++j) {
      float sum = 0;
      for (std::size_t p = 0; p < shape.k; ++p) sum += a[i * shape.lda + p] * b[p * shape.n + j];
      c[i * shape.ldc + j] = sum;
    }
}

}  // namespace lab02
