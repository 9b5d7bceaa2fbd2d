// Mistake: each block of k stores its sums into C with = instead of adding them: only the last
// block of k is left.
// Checked by: Matmul.CrossesEveryCacheBlock
// Expect: your output matches only the products from p = 512 to k = 613, the last block of k
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kBlock = 256;
  for (std::size_t i = 0; i < shape.m; ++i) std::fill_n(&c[i * shape.ldc], shape.n, 0.0f);
  for (std::size_t p0 = 0; p0 < shape.k; p0 += kBlock) {
    const std::size_t p1 = std::min(p0 + kBlock, shape.k);
    for (std::size_t i = 0; i < shape.m; ++i)
      for (std::size_t j = 0; j < shape.n; ++j) {
        float sum = 0;
        for (std::size_t p = p0; p < p1; ++p) sum += a[i * shape.lda + p] * b[p * shape.ldb + j];
        c[i * shape.ldc + j] = sum;
      }
  }
}

}  // namespace lab02
