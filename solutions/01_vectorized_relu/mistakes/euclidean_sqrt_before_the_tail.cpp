// Mistake: the square root is taken of the whole batches' sum, and the tail's squares are added to
// the distance after it.
// Checked by: EuclideanDistance.MatchesOracleAtEverySize
// Expect: your result is the final step (for a distance: the square root) of the whole batches' sum
// Expect: added after it: the tail loop runs after the final step
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
  float distance = std::sqrt(xsimd::hadd(acc));  // the mistake: the sqrt after the tail
  for (; i < a.size(); ++i) {
    const float d = a[i] - b[i];
    distance += d * d;
  }
  return distance;
}

}  // namespace lab01
