// Mistake: euclidean_distance unrolled over 2 accumulators; the second one's FMA multiplies its
// difference by the first batch's, fma(d1, d0, acc1), instead of squaring its own: right until
// the unrolled loop runs (n < 32 with 16 lanes).
// Checked by: EuclideanDistance.MatchesOracleAtEverySize
// Expect: whose accumulator 1 multiplies the difference of its own batch
// Expect: each accumulator multiplies the two factors of its own batch
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
  Batch acc0(0.0f), acc1(0.0f);
  std::size_t i = 0;
  for (; i + 2 * Batch::size <= n; i += 2 * Batch::size) {
    const Batch d0 = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
    const Batch d1 =
        Batch::load_unaligned(&a[i + Batch::size]) - Batch::load_unaligned(&b[i + Batch::size]);
    acc0 = xsimd::fma(d0, d0, acc0);
    acc1 = xsimd::fma(d1, d0, acc1);  // the mistake: fma(d1, d1, acc1)
  }
  for (; i + Batch::size <= n; i += Batch::size) {
    const Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
    acc0 = xsimd::fma(d, d, acc0);
  }
  float sum = xsimd::hadd(acc0 + acc1);
  for (; i < n; ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(sum);
}

}  // namespace lab01
