// Mistake: the max over whole batches only, no scalar tail.
// Checked by: SymmetricScale.LargestMagnitudeAnywhereAndNegative
// Expect: your result matches max |x| over the full batches only, over 127
#include "quantize.hpp"

#include <xsimd/xsimd.hpp>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  using Batch = xsimd::batch<float>;
  Batch largest(0.0f);
  for (std::size_t i = 0; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = xsimd::abs(Batch::load_unaligned(&x[i]));
    largest = xsimd::select(v > largest, v, largest);
  }
  float m = 0;
  for (std::size_t lane = 0; lane < Batch::size; ++lane)
    m = m < largest.get(lane) ? largest.get(lane) : m;
  const float scale = m / 127.0f;
  return scale > 0 ? scale : 1.0f;
}

}  // namespace lab04
