// Mistake: rounded right, then cast to int8 without clamping: values beyond 127 wrap around.
// Checked by: Quantize.WithAGivenScaleManySaturate
// Expect: your output matches round(x / scale) without saturation: the cast to int8 wraps around
#include "quantize.hpp"

#include <cmath>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  for (std::size_t i = 0; i < x.size(); ++i)
    q[i] = static_cast<std::int8_t>(static_cast<int>(std::nearbyint(x[i] / scale)));
}

}  // namespace lab04
