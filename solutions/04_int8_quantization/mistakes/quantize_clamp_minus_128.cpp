// Mistake: clamped to the whole int8 range, [-128, 127], not the symmetric [-127, 127].
// Checked by: Quantize.SaturatesInsteadOfWrapping
// Expect: your output matches round(x / scale) clamped to [-128, 127]
#include "quantize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  constexpr float lo = std::numeric_limits<std::int8_t>::min(),
                  hi = std::numeric_limits<std::int8_t>::max();
  for (std::size_t i = 0; i < x.size(); ++i)
    q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(x[i] / scale), lo, hi));
}

}  // namespace lab04
