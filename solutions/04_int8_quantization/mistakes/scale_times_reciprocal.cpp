// Mistake: max |x| * (1 / 127): two roundings, sometimes one unit in the last place off.
// Checked by: SymmetricScale.IsMaxAbsOver127AtEverySize
// Expect: your result matches max |x| * (1 / 127)
#include "quantize.hpp"

#include <algorithm>
#include <cmath>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  constexpr float kInverse = 1.0f / 127.0f;
  float largest = 0;
  for (const float v : x) largest = std::max(largest, std::fabs(v));
  const float scale = largest * kInverse;
  return scale > 0 ? scale : 1.0f;
}

}  // namespace lab04
