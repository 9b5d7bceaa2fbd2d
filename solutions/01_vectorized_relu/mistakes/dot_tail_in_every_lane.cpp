// Mistake: the scalar tail added to the Batch accumulator: each tail product lands in every lane.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: your result matches the tail's products each counted
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

float dot(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size)
    acc = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
  for (; i < a.size(); ++i) acc += a[i] * b[i];
  return xsimd::hadd(acc);
}

}  // namespace lab01
