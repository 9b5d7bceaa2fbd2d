// Mistake: C is cleared, then the loop over its rows is bounded by n (the columns) instead of m:
// when m > n, the rows from n on stay zero.
// Checked by: Matmul.TinyShapes
// Expect: rows only, the rest zero: the loop over rows stops at n =
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i) std::fill_n(&c[i * shape.ldc], shape.n, 0.0f);
  // (std::min keeps the mistake inside C when m < n: only the rows it leaves out are seen here.)
  for (std::size_t i = 0; i < std::min(shape.m, shape.n); ++i)
    for (std::size_t p = 0; p < shape.k; ++p)
      for (std::size_t j = 0; j < shape.n; ++j)
        c[i * shape.ldc + j] += a[i * shape.lda + p] * b[p * shape.ldb + j];
}

}  // namespace lab02
