// Mistake: the i-k-j loops assign each product to C (=) instead of adding it (+=).
// Checked by: Matmul.TinyShapes
// Expect: your output matches only the last product of each sum
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t j = 0; j < shape.n; ++j) c[i * shape.ldc + j] = 0;
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t p = 0; p < shape.k; ++p)
      for (std::size_t j = 0; j < shape.n; ++j)
        c[i * shape.ldc + j] = a[i * shape.lda + p] * b[p * shape.ldb + j];
}

}  // namespace lab02
