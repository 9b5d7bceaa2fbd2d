// Mistake: the SIMD loop without its scalar tail: the last n % lanes elements are never written.
// Checked by: Relu.MatchesOracleAtEverySize
// Expect: were never written: your tail loop is missing or stops early
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  using Batch = xsimd::batch<float>;
  const Batch zero(0.0f);
  for (std::size_t i = 0; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    xsimd::select(v <= zero, zero, v).store_unaligned(&y[i]);
  }
}

}  // namespace lab01
