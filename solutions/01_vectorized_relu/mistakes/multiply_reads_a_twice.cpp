// Mistake: a copy-paste slip: both operands loaded from a.
// Checked by: Multiply.MatchesOracleAtEverySize
// Expect: your output matches a * a: b is never read
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  using Batch = xsimd::batch<float>;
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size)
    (Batch::load_unaligned(&a[i]) * Batch::load_unaligned(&a[i])).store_unaligned(&out[i]);
  for (; i < b.size(); ++i) out[i] = a[i] * a[i];
}

}  // namespace lab01
