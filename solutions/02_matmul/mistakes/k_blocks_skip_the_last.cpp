// Mistake: the loop over blocks of k runs over full blocks only: the last, partial one is skipped.
// Checked by: Matmul.CrossesEveryCacheBlock
// Expect: your output matches each sum stopped at p = 576
// Expect: the end of the last full block of k = 613
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kBlock = 64;
  for (std::size_t i = 0; i < shape.m; ++i) std::fill_n(&c[i * shape.ldc], shape.n, 0.0f);
  for (std::size_t p0 = 0; p0 + kBlock <= shape.k; p0 += kBlock)
    for (std::size_t i = 0; i < shape.m; ++i)
      for (std::size_t p = p0; p < p0 + kBlock; ++p) {
        const float aip = a[i * shape.lda + p];
        for (std::size_t j = 0; j < shape.n; ++j)
          c[i * shape.ldc + j] += aip * b[p * shape.ldb + j];
      }
}

}  // namespace lab02
