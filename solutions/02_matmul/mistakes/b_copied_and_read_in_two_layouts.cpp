// Mistake: B copied into a buffer row by row (bt[p * n + j]) and read from it as if the copy were
// transposed (bt[j * k + p]): C = A * R with R the copy read n x k. No catalogue entry describes
// it; the identity probes do: with A the identity, C[i][j] took element i + j * k of b.
// Checked by: Matmul.PrimeShapes
// Expect: with A the identity, C must copy B
// Expect: took element i + j * k of b instead: B is read down its columns
#include "matmul.hpp"

#include <cstddef>
#include <vector>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  const auto [m, n, k, lda, ldb, ldc] = shape;
  // B transposed once: column j of B becomes the contiguous row bt[j * k, (j + 1) * k)
  std::vector<float> bt(k * n);
  for (std::size_t p = 0; p < k; ++p)
    for (std::size_t j = 0; j < n; ++j) bt[p * n + j] = b[p * ldb + j];
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (std::size_t p = 0; p < k; ++p) sum += a[i * lda + p] * bt[j * k + p];
      c[i * ldc + j] = sum;
    }
}

}  // namespace lab02
