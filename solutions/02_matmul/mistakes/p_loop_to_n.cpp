// Mistake: the loop over p is bounded by n (the columns of C) instead of k.
// Checked by: Matmul.PrimeShapes
// Expect: your output matches A * B with the loop over p running to n instead of k
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t j = 0; j < shape.n; ++j) {
      float sum = 0;
      for (std::size_t p = 0; p < shape.n; ++p) sum += a[i * shape.lda + p] * b[p * shape.ldb + j];
      c[i * shape.ldc + j] = sum;
    }
}

}  // namespace lab02
