// Mistake: blocks of k whose inner loop runs to the block size (p < kBlock) instead of the block's
// end (p < p0 + kBlock): every block after the first adds nothing.
// Checked by: Matmul.CrossesEveryCacheBlock
// Expect: your output matches only the products from p = 0 to 255, the first block of k
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kBlock = 256;
  for (std::size_t i = 0; i < shape.m; ++i) std::fill_n(&c[i * shape.ldc], shape.n, 0.0f);
  for (std::size_t p0 = 0; p0 < shape.k; p0 += kBlock)
    for (std::size_t i = 0; i < shape.m; ++i)
      for (std::size_t p = p0; p < std::min(kBlock, shape.k); ++p) {
        const float aip = a[i * shape.lda + p];
        for (std::size_t j = 0; j < shape.n; ++j)
          c[i * shape.ldc + j] += aip * b[p * shape.ldb + j];
      }
}

}  // namespace lab02
