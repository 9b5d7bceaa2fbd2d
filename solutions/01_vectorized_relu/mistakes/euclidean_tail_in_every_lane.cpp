// Mistake: the scalar tail added to the Batch accumulator: each tail term lands in every lane.
// Checked by: EuclideanDistance.MatchesOracleAtEverySize
// Expect: your result matches the tail's squared differences each counted
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

#include <cmath>

namespace lab01 {

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size) {
    const Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
    acc = xsimd::fma(d, d, acc);
  }
  for (; i < a.size(); ++i) acc += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(xsimd::hadd(acc));
}

}  // namespace lab01
