// Mistake: the square root taken of each lane of the accumulator (xsimd::sqrt before hadd) and of
// the tail's sum: a sum of square roots, not the root of the sum.
// Checked by: EuclideanDistance.MatchesOracleAtEverySize
// Expect: lanes' partial sums added up (plus the square root of the tail's sum)
// Expect: then take std::sqrt once
// (GCC 12 warns that the AVX-512 intrinsic behind xsimd::sqrt may read an uninitialised value,
// a false positive: silenced so that the -Werror build of the catalogue compiles this file.)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "vector_ops.hpp"

#include <workbook/require.hpp>

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab01 {

using Batch = xsimd::batch<float>;

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("euclidean_distance", a.size(), "a", b.size(), "b");
  const std::size_t n = a.size();
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= n; i += Batch::size) {
    Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
    acc = xsimd::fma(d, d, acc);
  }
  float tail = 0.0f;
  for (; i < n; ++i) {
    float d = a[i] - b[i];
    tail += d * d;
  }
  // square root of every lane, then add them up, plus the tail
  return xsimd::hadd(xsimd::sqrt(acc)) + std::sqrt(tail);
}

}  // namespace lab01
