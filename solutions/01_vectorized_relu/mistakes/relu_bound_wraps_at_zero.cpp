// Mistake: the SIMD loop's bound is i <= n - Batch::size: for n smaller than a batch, n -
// Batch::size wraps around to a huge unsigned number, and the loop runs far past the end (at n = 0
// it starts from an empty span's null data()).
// Checked by: Relu.MatchesOracleAtEverySize
// Expect: The case is n = 0
// Expect: where n - k wraps around to a huge number
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  using Batch = xsimd::batch<float>;
  const std::size_t n = x.size();
  std::size_t i = 0;
  for (; i <= n - Batch::size; i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    xsimd::select(v <= Batch(0.0f), Batch(0.0f), v).store_unaligned(&y[i]);
  }
  for (; i < n; ++i) y[i] = x[i] <= 0.0f ? 0.0f : x[i];
}

}  // namespace lab01
