// Mistake: a copy-paste slip: both operands loaded from a, so the result is |a|^2.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: your result matches the sum of a[i] * a[i]: b is never read
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

float dot(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= b.size(); i += Batch::size)
    acc = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&a[i]), acc);
  float sum = xsimd::hadd(acc);
  for (; i < a.size(); ++i) sum += a[i] * a[i];
  return sum;
}

}  // namespace lab01
