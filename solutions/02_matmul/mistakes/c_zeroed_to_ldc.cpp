// Mistake: each row of C is zeroed up to ldc, the step between rows, instead of n: the padding
// between rows is overwritten, and the last row runs ldc - n elements past the end of C.
// Checked by: Matmul.LeadingDimensionsLargerThanTheRows
// Expect: The loop over a row's columns runs to the leading dimension instead of the row's length
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i) {
    for (std::size_t j = 0; j < shape.ldc; ++j) c.data()[i * shape.ldc + j] = 0;  // the mistake
    for (std::size_t p = 0; p < shape.k; ++p)
      for (std::size_t j = 0; j < shape.n; ++j)
        c[i * shape.ldc + j] += a[i * shape.lda + p] * b[p * shape.ldb + j];
  }
}

}  // namespace lab02
