// Mistake: A indexed column-major, a[p * lda + i]: C = A^T * B.
// Checked by: Matmul.MultipliesAMatrixByItself
// Expect: your output matches A * B with A read as if it were transposed
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t j = 0; j < shape.n; ++j) {
      float sum = 0;
      for (std::size_t p = 0; p < shape.k; ++p) sum += a[p * shape.lda + i] * b[p * shape.ldb + j];
      c[i * shape.ldc + j] = sum;
    }
}

}  // namespace lab02
