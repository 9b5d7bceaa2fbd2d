// Mistake: the scalar tail loop starts at 0 again: the whole batches' products are added twice.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: your result matches the sum with the whole batches' products counted twice
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

float dot(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  for (std::size_t i = 0; i + Batch::size <= a.size(); i += Batch::size)
    acc = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
  float sum = xsimd::hadd(acc);
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace lab01
