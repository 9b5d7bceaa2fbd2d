// Mistake: squared_difference as a * a - b * b (one fused multiply-subtract), which is not
// (a - b)^2. No catalogue entry names it: the fit of the wrong elements to the inputs does.
// Checked by: SquaredDifference.MatchesOracleAtEverySize
// Expect: your output is a*a - b*b, where the answer is a*a - 2*a*b + b*b
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void squared_difference(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  using Batch = xsimd::batch<float>;
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size) {
    const Batch va = Batch::load_unaligned(&a[i]), vb = Batch::load_unaligned(&b[i]);
    xsimd::fms(va, va, vb * vb).store_unaligned(&out[i]);
  }
  for (; i < a.size(); ++i) out[i] = a[i] * a[i] - b[i] * b[i];
}

}  // namespace lab01
