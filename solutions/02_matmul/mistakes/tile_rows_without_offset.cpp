// Mistake: register tiles of 4 rows whose loads of A leave out the tile's first row i0: every
// tile reads rows 0 to 3 of A.
// Checked by: Matmul.PrimeShapes
// Expect: your output matches row i of C computed from row i % 4 of A
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kRows = 4;
  for (std::size_t i0 = 0; i0 < shape.m; i0 += kRows) {
    const std::size_t rows = std::min(kRows, shape.m - i0);
    for (std::size_t r = 0; r < rows; ++r) std::fill_n(&c[(i0 + r) * shape.ldc], shape.n, 0.0f);
    for (std::size_t p = 0; p < shape.k; ++p)
      for (std::size_t r = 0; r < rows; ++r) {
        const float arp = a[r * shape.lda + p];  // the mistake: row r, not i0 + r
        for (std::size_t j = 0; j < shape.n; ++j)
          c[(i0 + r) * shape.ldc + j] += arp * b[p * shape.ldb + j];
      }
  }
}

}  // namespace lab02
