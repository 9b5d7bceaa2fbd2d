// Mistake: blocked loops whose "add to C" flag is set once the first column block is done, not
// once the first block of k is: every later column block adds its first partial sums to whatever
// C held. Run on a C of zeros, those columns are right: the test says they were added to.
// Checked by: Matmul.PrimeShapes
// Expect: and the right answer when C held zeros before it: your code adds to them
#include "matmul.hpp"

#include <algorithm>
#include <cstddef>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  const auto [m, n, k, lda, ldb, ldc] = shape;
  constexpr std::size_t kc = 32, nc = 64;  // a block of k, a block of columns
  bool accumulate = false;
  for (std::size_t pc = 0; pc < k; pc += kc) {
    const std::size_t p_end = std::min(pc + kc, k);
    for (std::size_t jc = 0; jc < n; jc += nc) {
      const std::size_t j_end = std::min(jc + nc, n);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = jc; j < j_end; ++j) {
          float sum = 0.0f;
          for (std::size_t p = pc; p < p_end; ++p) sum += a[i * lda + p] * b[p * ldb + j];
          c[i * ldc + j] = accumulate ? c[i * ldc + j] + sum : sum;
        }
      accumulate = true;  // after the first column block: the first block of k was meant
    }
  }
}

}  // namespace lab02
