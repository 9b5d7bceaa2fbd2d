// Mistake: the running max starts at x[0] itself, so a negative first value never counts.
// Checked by: SymmetricScale.LargestMagnitudeAnywhereAndNegative
// Expect: your result matches the max started from x[0], not |x[0]|
#include "quantize.hpp"

#include <algorithm>
#include <cmath>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  if (x.empty()) return 1.0f;
  float largest = x[0];
  for (std::size_t i = 1; i < x.size(); ++i) largest = std::max(largest, std::fabs(x[i]));
  const float scale = largest / 127.0f;
  return scale > 0 ? scale : 1.0f;
}

}  // namespace lab04
