// Mistake: the scale as max|x| times the reciprocal of 127, computed as 1 / 127 in integers: 0.
// Every scale then comes out 0, and the all-zeros special case makes it 1.
// Checked by: SymmetricScale.IsMaxAbsOver127AtEverySize
// Expect: your max|x| / 127 came out 0 before that special case
#include "quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  constexpr float inverse = 1 / 127;  // multiply instead of dividing
  float largest = 0.0f;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]))
      throw std::invalid_argument("symmetric_scale: x[" + std::to_string(i) + "] is not finite");
    largest = std::max(largest, std::fabs(x[i]));
  }
  const float scale = largest * inverse;
  return scale > 0 ? scale : 1.0f;
}

}  // namespace lab04
