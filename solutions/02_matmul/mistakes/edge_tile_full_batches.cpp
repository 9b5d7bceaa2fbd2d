// Mistake: B packed into zero-padded panels of one SIMD batch of columns, but the edge panel's
// result stored as a whole batch: past the last column of C (into the padding, or past the end).
// Checked by: Matmul.TinyShapes
// Expect: wrote past the end of the output
// Expect: the tile at the right edge of C stores whole SIMD batches
#include "matmul.hpp"

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <vector>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  using Batch = xsimd::batch<float>;
  constexpr std::size_t kLanes = Batch::size;
  std::vector<float> panel(shape.k * kLanes);
  for (std::size_t j0 = 0; j0 < shape.n; j0 += kLanes) {
    const std::size_t cols = std::min(kLanes, shape.n - j0);
    std::fill(panel.begin(), panel.end(), 0.0f);  // zero-padded: the loads are safe
    for (std::size_t p = 0; p < shape.k; ++p)
      std::copy_n(&b[p * shape.ldb + j0], cols, &panel[p * kLanes]);
    for (std::size_t i = 0; i < shape.m; ++i) {
      Batch acc(0.0f);
      for (std::size_t p = 0; p < shape.k; ++p)
        acc =
            xsimd::fma(Batch(a[i * shape.lda + p]), Batch::load_unaligned(&panel[p * kLanes]), acc);
      acc.store_unaligned(&c[i * shape.ldc + j0]);  // all kLanes columns, even past n
    }
  }
}

}  // namespace lab02
