// Mistake: the loop loads whole batches but steps by a lane count written in the code (8, AVX2's
// width), half of this build's batch: the batches overlap, and most products are added twice.
// (Written as Batch::size / 2 so that it is the same mistake on AVX2 and AVX-512 builds.)
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: products that overlap: the loop steps by
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

float dot(std::span<const float> a, std::span<const float> b) {
  using Batch = xsimd::batch<float>;
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size / 2)
    acc = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
  float sum = xsimd::hadd(acc);
  for (; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace lab01
