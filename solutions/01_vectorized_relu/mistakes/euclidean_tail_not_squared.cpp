// Mistake: the scalar tail adds |a[i] - b[i]| where the SIMD loop adds its square.
// Checked by: EuclideanDistance.MatchesOracleAtEverySize
// Expect: your result matches the tail's differences added as |a[i] - b[i]|, not squared
#include "vector_ops.hpp"

#include <cmath>

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
  for (; i < a.size(); ++i) sum += std::abs(a[i] - b[i]);
  return std::sqrt(sum);
}

}  // namespace lab01
