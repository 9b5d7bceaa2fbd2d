// Mistake: i and j swapped where C is stored: c[j * ldc + i], C transposed.
// Checked by: Matmul.MultipliesAMatrixByItself
// Expect: your output matches A * B stored transposed (element (i, j) at c[j * ldc + i])
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t j = 0; j < shape.n; ++j) {
      float sum = 0;
      for (std::size_t p = 0; p < shape.k; ++p) sum += a[i * shape.lda + p] * b[p * shape.ldb + j];
      c[j * shape.ldc + i] = sum;
    }
}

}  // namespace lab02
