// Mistake: the loop over blocks of k outside, with C set to zero at the start of every block: C
// holds only the last block's products.
// Checked by: Matmul.LargeK
// Expect: the last block of k: each block of k replaced C instead of adding to it
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kBlock = 128;
  for (std::size_t p0 = 0; p0 < shape.k; p0 += kBlock) {
    const std::size_t p1 = std::min(p0 + kBlock, shape.k);
    for (std::size_t i = 0; i < shape.m; ++i) {
      std::fill_n(&c[i * shape.ldc], shape.n, 0.0f);  // the mistake: zeroed for every block
      for (std::size_t p = p0; p < p1; ++p) {
        const float aip = a[i * shape.lda + p];
        for (std::size_t j = 0; j < shape.n; ++j)
          c[i * shape.ldc + j] += aip * b[p * shape.ldb + j];
      }
    }
  }
}

}  // namespace lab02
