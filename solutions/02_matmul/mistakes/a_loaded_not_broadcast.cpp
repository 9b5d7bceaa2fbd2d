// Mistake: A's element is loaded as a whole batch (A[i][p], A[i][p + 1], ...) where it should be
// broadcast to every lane: lane 0 of each batch of columns is right, lane l multiplies B's row by
// A[i][p + l]. The last columns, done one by one, are right.
// Checked by: Matmul.PrimeShapes
// Expect: your output matches A's element loaded as a batch (lane l of the columns multiplies B
// Expect: Batch(a[i * lda + p]) (xsimd::broadcast)
#include "matmul.hpp"

#include <xsimd/xsimd.hpp>

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  using Batch = xsimd::batch<float>;
  require_valid_arguments(a, b, c, shape);
  for (std::size_t i = 0; i < shape.m; ++i) {
    float* row = &c[i * shape.ldc];
    std::fill_n(row, shape.n, 0.0f);
    for (std::size_t p = 0; p < shape.k; ++p) {
      const float* b_row = &b[p * shape.ldb];
      std::size_t j = 0;
      for (; j + Batch::size <= shape.n; j += Batch::size)
        xsimd::fma(Batch::load_unaligned(&a[i * shape.lda + p]),  // the mistake: Batch(a[...])
                   Batch::load_unaligned(b_row + j), Batch::load_unaligned(row + j))
            .store_unaligned(row + j);
      for (; j < shape.n; ++j) row[j] += a[i * shape.lda + p] * b_row[j];
    }
  }
}

}  // namespace lab02
