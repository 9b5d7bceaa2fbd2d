// Mistake: the clamp applied to the int8, after the cast has already wrapped the value around.
// Checked by: Quantize.SaturatesInsteadOfWrapping
// Expect: your output matches round(x / scale) cast to int8 before the clamp
#include "quantize.hpp"

#include <algorithm>
#include <cmath>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto narrow = static_cast<std::int8_t>(std::lrint(x[i] / scale));
    q[i] = std::max<std::int8_t>(narrow, -127);
  }
}

}  // namespace lab04
