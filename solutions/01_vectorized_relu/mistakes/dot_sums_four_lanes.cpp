// Mistake: the lanes of the accumulator summed by hand up to 4 (an SSE register's count), while a
// batch holds Batch::size of them: the other lanes never reach the result.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: your result matches lanes 0 to 3 of the accumulator's
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

float dot(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size)
    acc = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
  alignas(64) float lanes[Batch::size];
  acc.store_aligned(lanes);
  float sum = 0;
  for (std::size_t lane = 0; lane < 4; ++lane) sum += lanes[lane];
  for (; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace lab01
