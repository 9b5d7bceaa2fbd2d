// Mistake: dot unrolled over 4 accumulators, accumulator k reading its batch at i + k instead of
// i + k * Batch::size: the 4 batches of a step overlap, some products counted 4 times.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: accumulators whose accumulator k reads its batch at i + k * 1 instead of i + k *
// Expect: the batches of one step overlap
#include "vector_ops.hpp"

#include <workbook/require.hpp>

#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab01 {

using Batch = xsimd::batch<float>;

float dot(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("dot", a.size(), "a", b.size(), "b");
  const std::size_t n = a.size();
  Batch acc[4] = {Batch(0.0f), Batch(0.0f), Batch(0.0f), Batch(0.0f)};
  std::size_t i = 0;
  for (; i + 4 * Batch::size <= n; i += 4 * Batch::size)
    for (std::size_t k = 0; k < 4; ++k)
      acc[k] = xsimd::fma(Batch::load_unaligned(&a[i + k]), Batch::load_unaligned(&b[i + k]),
                          acc[k]);  // the mistake: i + k * Batch::size
  for (; i + Batch::size <= n; i += Batch::size)
    acc[0] = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc[0]);
  float sum = xsimd::hadd(acc[0] + acc[1] + acc[2] + acc[3]);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace lab01
