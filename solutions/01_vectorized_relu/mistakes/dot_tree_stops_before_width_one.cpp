// Mistake: a dot unrolled over four accumulators adds them pairwise, but the tree's loop stops
// before its last level (width > 1): acc0 + acc2 reaches the result, acc1 + acc3 never does.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: accumulators 1 and 3 of your 4 (batches of
// Expect: check its pairs and its last level
#include "vector_ops.hpp"

#include <workbook/require.hpp>

#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab01 {

using Batch = xsimd::batch<float>;

float dot(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("dot", a.size(), "a", b.size(), "b");
  const std::size_t n = a.size();
  constexpr std::size_t W = Batch::size;
  Batch acc[4] = {Batch(0.0f), Batch(0.0f), Batch(0.0f), Batch(0.0f)};
  std::size_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W)
    for (std::size_t k = 0; k < 4; ++k)
      acc[k] = xsimd::fma(Batch::load_unaligned(&a[i + k * W]),
                          Batch::load_unaligned(&b[i + k * W]), acc[k]);
  for (; i + W <= n; i += W)
    acc[0] = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc[0]);
  for (std::size_t width = 2; width > 1; width /= 2)  // the mistake: width > 0
    for (std::size_t k = 0; k < width; ++k) acc[k] += acc[k + width];
  float sum = xsimd::hadd(acc[0]);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace lab01
