// Mistake: the two branches of xsimd::select swapped: positives zeroed, negatives kept.
// Checked by: Relu.MatchesOracleAtEverySize
// Expect: your output matches min(x, 0)
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  using Batch = xsimd::batch<float>;
  const Batch zero(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    xsimd::select(v > zero, zero, v).store_unaligned(&y[i]);
  }
  for (; i < x.size(); ++i) y[i] = x[i] > 0 ? 0.0f : x[i];
}

}  // namespace lab01
