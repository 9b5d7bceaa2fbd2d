// Mistake: max |x| / 127 with no special case: 0 for an all-zero tensor (a division by 0 later).
// Checked by: SymmetricScale.AllZeroOrEmptyIsOne
// Expect: your result matches max |x| / 127 = 0, with no special case
#include "quantize.hpp"

#include <algorithm>
#include <cmath>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  float largest = 0;
  for (const float v : x) largest = std::max(largest, std::fabs(v));
  return largest / 127.0f;
}

}  // namespace lab04
