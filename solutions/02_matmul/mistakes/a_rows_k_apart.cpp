// Mistake: the rows of A are stepped by k instead of lda (only right without padding).
// Checked by: Matmul.LeadingDimensionsLargerThanTheRows
// Expect: your output matches A * B with the rows of A read k apart instead of lda
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t j = 0; j < shape.n; ++j) {
      float sum = 0;
      for (std::size_t p = 0; p < shape.k; ++p) sum += a[i * shape.k + p] * b[p * shape.ldb + j];
      c[i * shape.ldc + j] = sum;
    }
}

}  // namespace lab02
