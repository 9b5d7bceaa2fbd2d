// Mistake: the special case tests max |x| == 0 instead of the quotient: values so tiny that
// max |x| / 127 underflows to 0 still get a scale of 0.
// Checked by: SymmetricScale.UnderflowingQuotientIsOne
// Expect: your special case tests max|x| == 0 instead of the quotient
#include "quantize.hpp"

#include <algorithm>
#include <cmath>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  float largest = 0;
  for (const float v : x) largest = std::max(largest, std::fabs(v));
  if (largest == 0.0f) return 1.0f;  // the mistake: test largest / 127.0f == 0
  return largest / 127.0f;
}

}  // namespace lab04
