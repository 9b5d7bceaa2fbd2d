// Mistake: after the SIMD loop over the columns of a row, the scalar loop for the last columns
// starts again at column 0: the columns of the whole batches get every product twice.
// Checked by: Matmul.PrimeShapes
// Expect: with every product counted twice: the scalar loop for the last columns starts again
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
      const float aip = a[i * shape.lda + p];
      const float* b_row = &b[p * shape.ldb];
      std::size_t j = 0;
      for (; j + Batch::size <= shape.n; j += Batch::size)
        xsimd::fma(Batch(aip), Batch::load_unaligned(b_row + j), Batch::load_unaligned(row + j))
            .store_unaligned(row + j);
      for (j = 0; j < shape.n; ++j) row[j] += aip * b_row[j];
    }
  }
}

}  // namespace lab02
