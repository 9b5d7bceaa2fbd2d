// Mistake: a register-blocked kernel of 4 x 8 tiles with no code for the leftover rows and columns.
// Checked by: Matmul.PrimeShapes
// Expect: the last 3 rows and the last 7 columns were never written
// Expect: your blocked loops skip the remainder
#include "matmul.hpp"

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kRows = 4, kCols = 8;
  for (std::size_t i0 = 0; i0 + kRows <= shape.m; i0 += kRows)
    for (std::size_t j0 = 0; j0 + kCols <= shape.n; j0 += kCols) {
      float tile[kRows][kCols] = {};
      for (std::size_t p = 0; p < shape.k; ++p)
        for (std::size_t i = 0; i < kRows; ++i)
          for (std::size_t j = 0; j < kCols; ++j)
            tile[i][j] += a[(i0 + i) * shape.lda + p] * b[p * shape.ldb + j0 + j];
      for (std::size_t i = 0; i < kRows; ++i)
        for (std::size_t j = 0; j < kCols; ++j) c[(i0 + i) * shape.ldc + j0 + j] = tile[i][j];
    }
}

}  // namespace lab02
