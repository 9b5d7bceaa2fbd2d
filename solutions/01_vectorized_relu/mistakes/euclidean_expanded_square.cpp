// Mistake: the distance from the expanded square, sqrt(a.a - 2 a.b + b.b), three dot products in
// one pass: right in exact arithmetic, but for nearby vectors the three float32 sums cancel.
// Checked by: EuclideanDistance.OfNearbyVectors
// Expect: the square expanded: its error is that of three large float32 sums that cancel
// Expect: Subtract first: d = a[i] - b[i], accumulate d * d
#include "vector_ops.hpp"

#include <workbook/require.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab01 {

using Batch = xsimd::batch<float>;

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("euclidean_distance", a.size(), "a", b.size(), "b");
  const std::size_t n = a.size();
  // |a - b|^2 = a.a - 2 a.b + b.b: one pass, three accumulators
  Batch aa(0.0f), ab(0.0f), bb(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= n; i += Batch::size) {
    const Batch x = Batch::load_unaligned(&a[i]), y = Batch::load_unaligned(&b[i]);
    aa = xsimd::fma(x, x, aa);
    ab = xsimd::fma(x, y, ab);
    bb = xsimd::fma(y, y, bb);
  }
  float saa = xsimd::hadd(aa), sab = xsimd::hadd(ab), sbb = xsimd::hadd(bb);
  for (; i < n; ++i) {
    saa += a[i] * a[i];
    sab += a[i] * b[i];
    sbb += b[i] * b[i];
  }
  return std::sqrt(std::max(saa - 2 * sab + sbb, 0.0f));
}

}  // namespace lab01
