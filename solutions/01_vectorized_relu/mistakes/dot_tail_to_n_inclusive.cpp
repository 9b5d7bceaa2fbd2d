// Mistake: the scalar tail loop runs while i <= n: it reads a[n] and b[n], one past the end.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: your loop read past the end of the input
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

float dot(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size)
    acc = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
  float sum = xsimd::hadd(acc);
  for (; i <= a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace lab01
