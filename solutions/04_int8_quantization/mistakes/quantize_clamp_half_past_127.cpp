// Mistake: the quotient clamped to [-127.5, 127.5] before rounding ("everything in [126.5, 127.5]
// rounds to 127 anyway"): but 127.5 itself rounds to the even 128, which wraps to -128.
// Checked by: Quantize.RoundsHalfToEven
// Expect: your output matches x / scale clamped to [-127.5, 127.5], then rounded
#include "quantize.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]))
      throw std::invalid_argument("quantize: x[" + std::to_string(i) + "] is nan");
    const float r = std::nearbyint(std::clamp(x[i] / scale, -127.5f, 127.5f));
    q[i] = static_cast<std::int8_t>(static_cast<std::int32_t>(r));
  }
}

}  // namespace lab04
