// Mistake: A's element held in an int: its fraction is dropped, and every value between -1 and 1
// counts as 0.
// Checked by: Matmul.PrimeShapes
// Expect: A's element truncated to a whole number (a float held in an int variable)
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i) {
    for (std::size_t j = 0; j < shape.n; ++j) c[i * shape.ldc + j] = 0;
    for (std::size_t p = 0; p < shape.k; ++p) {
      const int a_ip = a[i * shape.lda + p];  // the mistake: float
      for (std::size_t j = 0; j < shape.n; ++j) c[i * shape.ldc + j] += a_ip * b[p * shape.ldb + j];
    }
  }
}

}  // namespace lab02
