// Mistake: a dot whose FMA takes the accumulator as its first operand, fma(acc, a, b): each
// batch computes acc * a + b, multiplying the running sum instead of adding a * b to it.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: your result matches fma(acc, a, b): acc * a + b for each batch
// Expect: the accumulator is the third operand
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
  Batch acc0(0.0f), acc1(0.0f);
  std::size_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    acc0 = xsimd::fma(acc0, Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]));
    acc1 = xsimd::fma(acc1, Batch::load_unaligned(&a[i + W]), Batch::load_unaligned(&b[i + W]));
  }
  for (; i + W <= n; i += W)
    acc0 = xsimd::fma(acc0, Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]));
  float sum = xsimd::hadd(acc0 + acc1);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace lab01
