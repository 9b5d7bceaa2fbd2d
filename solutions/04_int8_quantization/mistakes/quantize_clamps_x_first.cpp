// Mistake: x clamped to [-127, 127] before dividing, instead of x / scale: where scale > 1 every
// |x| > 127 comes out +-round(127 / scale); where scale < 1 the quotient is never saturated.
// Checked by: Quantize.HugeTinyAndDenormalValues
// Expect: your output matches round(clamp(x, -127, 127) / scale): x clamped before dividing
#include "quantize.hpp"

#include <algorithm>
#include <cmath>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  for (std::size_t i = 0; i < x.size(); ++i)
    q[i] = static_cast<std::int8_t>(
        static_cast<int>(std::nearbyint(std::clamp(x[i], -127.0f, 127.0f) / scale)));
}

}  // namespace lab04
