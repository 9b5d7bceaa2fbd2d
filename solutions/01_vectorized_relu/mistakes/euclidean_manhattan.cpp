// Mistake: the absolute differences summed (the Manhattan distance), nothing squared.
// Checked by: EuclideanDistance.MatchesOracleAtEverySize
// Expect: your result matches the sum of |a[i] - b[i]| (the Manhattan distance)
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

#include <cmath>

namespace lab01 {

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size)
    acc += xsimd::abs(Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]));
  float sum = xsimd::hadd(acc);
  for (; i < a.size(); ++i) sum += std::fabs(a[i] - b[i]);
  return sum;
}

}  // namespace lab01
