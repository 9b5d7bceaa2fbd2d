// Mistake: the i-k-j loops add into C without setting it to zero first (C += A * B).
// Checked by: Matmul.OverwritesStaleContentsOfC
// Expect: your output matches C's earlier contents plus A * B
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t p = 0; p < shape.k; ++p) {
      const float aip = a[i * shape.lda + p];
      for (std::size_t j = 0; j < shape.n; ++j) c[i * shape.ldc + j] += aip * b[p * shape.ldb + j];
    }
}

}  // namespace lab02
