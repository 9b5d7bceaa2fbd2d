// Mistake: the loop over p starts at 1: every sum leaves out its first product.
// Checked by: Matmul.PrimeShapes
// Expect: your output matches each sum without its first product
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t j = 0; j < shape.n; ++j) {
      float sum = 0;
      for (std::size_t p = 1; p < shape.k; ++p) sum += a[i * shape.lda + p] * b[p * shape.ldb + j];
      c[i * shape.ldc + j] = sum;
    }
}

}  // namespace lab02
