// Mistake: the i-j-p loops with one sum for the whole matrix, set to 0 before the loops and never
// reset: each element of C carries the sums of the elements before it.
// Checked by: Matmul.TinyShapes
// Expect: every one before it in C (a running sum over the matrix)
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  float sum = 0;
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t j = 0; j < shape.n; ++j) {
      for (std::size_t p = 0; p < shape.k; ++p) sum += a[i * shape.lda + p] * b[p * shape.ldb + j];
      c[i * shape.ldc + j] = sum;
    }
}

}  // namespace lab02
