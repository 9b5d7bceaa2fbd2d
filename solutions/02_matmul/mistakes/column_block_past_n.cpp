// Mistake: blocks of columns whose inner loop runs a whole block (j < j0 + kCols) even in the last
// block, where fewer than kCols columns are left: past the row's end it adds into the next row of C
// (and past the last row, outside C).
// Checked by: Matmul.TinyShapes
// Expect: row 0 is right, and in every later row every element is wrong
// Expect: they land at the start of the next row
// Expect: a block of columns (or a row's last batch) must end at N, min(j0 + block, N)
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kCols = 64;
  for (std::size_t i = 0; i < shape.m; ++i) std::fill_n(&c[i * shape.ldc], shape.n, 0.0f);
  for (std::size_t j0 = 0; j0 < shape.n; j0 += kCols)
    for (std::size_t i = 0; i < shape.m; ++i)
      for (std::size_t p = 0; p < shape.k; ++p) {
        const float aip = a[i * shape.lda + p];
        for (std::size_t j = j0; j < j0 + kCols; ++j)
          c[i * shape.ldc + j] += aip * b[p * shape.ldb + j];
      }
}

}  // namespace lab02
