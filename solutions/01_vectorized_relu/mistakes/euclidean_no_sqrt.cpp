// Mistake: the sum of squares returned without its square root.
// Checked by: EuclideanDistance.MatchesOracleAtEverySize
// Expect: returned the sum itself, without its final step
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size) {
    const Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
    acc = xsimd::fma(d, d, acc);
  }
  float sum = xsimd::hadd(acc);
  for (; i < a.size(); ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return sum;
}

}  // namespace lab01
