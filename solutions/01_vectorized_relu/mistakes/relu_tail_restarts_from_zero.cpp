// Mistake: the scalar tail loop reads from index 0 again instead of where the SIMD loop stopped.
// Below one batch it is the whole loop and right; above, the last n % lanes elements are wrong.
// Checked by: Relu.MatchesOracleAtEverySize
// Expect: the scalar tail restarts its input index at 0
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  using Batch = xsimd::batch<float>;
  const Batch zero(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    xsimd::select(v <= zero, zero, v).store_unaligned(&y[i]);
  }
  for (std::size_t j = 0; i + j < x.size(); ++j) y[i + j] = x[j] <= 0 ? 0.0f : x[j];
}

}  // namespace lab01
