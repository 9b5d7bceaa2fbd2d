// Mistake: the scalar tail with its own index from 0: it writes the last elements from the first
// inputs.
// Checked by: Relu.MatchesOracleAtEverySize
// Expect: your output matches the tail computed from the first
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  using Batch = xsimd::batch<float>;
  const Batch zero(0.0f);
  const std::size_t full = x.size() - x.size() % Batch::size;
  for (std::size_t i = 0; i < full; i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    xsimd::select(v <= zero, zero, v).store_unaligned(&y[i]);
  }
  for (std::size_t j = 0; j < x.size() - full; ++j) y[full + j] = x[j] <= 0.0f ? 0.0f : x[j];
}

}  // namespace lab01
