// Mistake: the sum starts at the first product, and the loop at index 0 all the same.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: your result matches the sum with its first term counted twice
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

float dot(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  if (a.empty()) return 0.0f;
  float sum = a[0] * b[0];
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size)
    acc = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
  for (; i < a.size(); ++i) sum += a[i] * b[i];
  return sum + xsimd::hadd(acc);
}

}  // namespace lab01
