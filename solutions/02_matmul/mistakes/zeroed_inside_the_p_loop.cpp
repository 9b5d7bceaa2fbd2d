// Mistake: C's row is zeroed at p == 0 inside the loop over p, so with k = 0 nothing is written.
// Checked by: Matmul.KIsZeroGivesZeros
// Expect: your output matches C as it was before the call
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t p = 0; p < shape.k; ++p) {
      const float aip = a[i * shape.lda + p];
      for (std::size_t j = 0; j < shape.n; ++j) {
        const float before = p == 0 ? 0.0f : c[i * shape.ldc + j];
        c[i * shape.ldc + j] = before + aip * b[p * shape.ldb + j];
      }
    }
}

}  // namespace lab02
