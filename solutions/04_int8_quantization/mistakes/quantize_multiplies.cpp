// Mistake: x * scale, as if the scale were its inverse, 127 / max |x|.
// Checked by: Quantize.MatchesOracleAtEverySize
// Expect: your output matches x * scale, not x / scale
#include "quantize.hpp"

#include <algorithm>
#include <cmath>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  for (std::size_t i = 0; i < x.size(); ++i)
    q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(x[i] * scale), -127.0f, 127.0f));
}

}  // namespace lab04
