// Mistake: the student's own shape check compares lda with the rows of A (m), where a row of A
// holds k elements: valid shapes with k < m are rejected.
// Checked by: Matmul.TinyShapes
// Expect: on inputs this test expects it to accept, in the case
#include "matmul.hpp"

#include <stdexcept>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  if (shape.lda < shape.m) throw std::invalid_argument("matmul: lda is smaller than m");
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i) {
    for (std::size_t j = 0; j < shape.n; ++j) c[i * shape.ldc + j] = 0;
    for (std::size_t p = 0; p < shape.k; ++p)
      for (std::size_t j = 0; j < shape.n; ++j)
        c[i * shape.ldc + j] += a[i * shape.lda + p] * b[p * shape.ldb + j];
  }
}

}  // namespace lab02
