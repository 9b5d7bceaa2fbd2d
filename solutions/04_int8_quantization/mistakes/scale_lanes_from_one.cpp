// Mistake: the max batch's lanes reduced from lane 1: elements at multiples of the batch size in
// the whole batches never reach the max.
// Checked by: SymmetricScale.IsMaxAbsOver127AtEverySize
// Expect: your result matches max |x| over every element but lane 0 of each whole batch
#include "quantize.hpp"

#include <algorithm>
#include <cmath>

#include <xsimd/xsimd.hpp>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  using Batch = xsimd::batch<float>;
  Batch largest(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = xsimd::abs(Batch::load_unaligned(&x[i]));
    largest = xsimd::select(v > largest, v, largest);
  }
  float lanes[Batch::size];
  largest.store_unaligned(lanes);
  float m = 0;
  for (std::size_t lane = 1; lane < Batch::size; ++lane) m = std::max(m, lanes[lane]);
  for (; i < x.size(); ++i) m = std::max(m, std::fabs(x[i]));
  const float scale = m / 127.0f;
  return scale > 0 ? scale : 1.0f;
}

}  // namespace lab04
