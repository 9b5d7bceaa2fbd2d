// Mistake: a loop unrolled by two that steps by two batches but stores only one.
// Checked by: Multiply.MatchesOracleAtEverySize
// Expect: your output matches one batch stored for every
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  using Batch = xsimd::batch<float>;
  constexpr std::size_t kStep = 2 * Batch::size;
  std::size_t i = 0;
  for (; i + kStep <= a.size(); i += kStep)
    (Batch::load_unaligned(&a[i]) * Batch::load_unaligned(&b[i])).store_unaligned(&out[i]);
  for (; i < a.size(); ++i) out[i] = a[i] * b[i];
}

}  // namespace lab01
