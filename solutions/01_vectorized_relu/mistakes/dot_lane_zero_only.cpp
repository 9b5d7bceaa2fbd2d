// Mistake: the accumulator's first lane taken as the sum, instead of adding all its lanes.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: your result matches lane 0 of the accumulator
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

float dot(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size)
    acc = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
  float sum = acc.get(0);
  for (; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace lab01
