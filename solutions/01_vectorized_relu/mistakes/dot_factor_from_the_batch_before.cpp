// Mistake: a dot unrolled over four accumulators whose fourth FMA takes b's batch from the third
// (b[i + 2 * W], copied from the line above and half edited): right until the unrolled loop runs.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: whose accumulator 3 multiplies a of its own batch (i + 3 *
// Expect: by b of batch 2
#include "vector_ops.hpp"

#include <workbook/require.hpp>

#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab01 {

using Batch = xsimd::batch<float>;

float dot(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("dot", a.size(), "a", b.size(), "b");
  const std::size_t n = a.size();
  Batch acc0(0.0f), acc1(0.0f), acc2(0.0f), acc3(0.0f);
  std::size_t i = 0;
  constexpr std::size_t W = Batch::size;
  for (; i + 4 * W <= n; i += 4 * W) {
    acc0 = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc0);
    acc1 = xsimd::fma(Batch::load_unaligned(&a[i + W]), Batch::load_unaligned(&b[i + W]), acc1);
    acc2 = xsimd::fma(Batch::load_unaligned(&a[i + 2 * W]), Batch::load_unaligned(&b[i + 2 * W]),
                      acc2);
    acc3 = xsimd::fma(Batch::load_unaligned(&a[i + 3 * W]),
                      Batch::load_unaligned(&b[i + 2 * W]),  // the mistake: b[i + 3 * W]
                      acc3);
  }
  for (; i + W <= n; i += W) {
    acc0 = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc0);
  }
  Batch total = acc0 + acc1 + acc2 + acc3;
  float sum = xsimd::hadd(total);
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * b[i];
  return sum + tail;
}

}  // namespace lab01
