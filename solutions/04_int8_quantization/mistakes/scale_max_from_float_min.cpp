// Mistake: the running max of |x| starts at std::numeric_limits<float>::min(), the smallest
// positive normal float, not 0: an all-zero tensor gets FLT_MIN / 127, not 1.
// Checked by: SymmetricScale.AllZeroOrEmptyIsOne
// Expect: the max started from std::numeric_limits<float>::min()
#include "quantize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  float largest = std::numeric_limits<float>::min();  // the mistake: 0
  for (const float v : x) largest = std::max(largest, std::fabs(v));
  const float scale = largest / 127.0f;
  return scale > 0 ? scale : 1.0f;
}

}  // namespace lab04
