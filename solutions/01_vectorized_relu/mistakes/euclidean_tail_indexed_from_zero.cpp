// Mistake: the scalar tail runs n % Batch::size times but from index 0: the first differences
// stand in for the last ones.
// Checked by: EuclideanDistance.MatchesOracleAtEverySize
// Expect: in place of the tail's: the tail loop indexed from 0
#include "vector_ops.hpp"

#include <cmath>

#include <xsimd/xsimd.hpp>

namespace lab01 {

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  const std::size_t full = a.size() - a.size() % Batch::size;
  for (std::size_t i = 0; i < full; i += Batch::size) {
    const Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
    acc = xsimd::fma(d, d, acc);
  }
  float sum = xsimd::hadd(acc);
  for (std::size_t i = 0; i < a.size() - full; ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(sum);
}

}  // namespace lab01
