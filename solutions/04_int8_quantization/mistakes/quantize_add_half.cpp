// Mistake: the C idiom (int)(v + 0.5), which rounds negative values toward zero.
// Checked by: Quantize.RoundsHalfToEven
// Expect: your output matches (int)(x / scale + 0.5): negative values rounded toward zero
#include "quantize.hpp"

#include <algorithm>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const int rounded = static_cast<int>(x[i] / scale + 0.5f);
    q[i] = static_cast<std::int8_t>(std::clamp(rounded, -127, 127));
  }
}

}  // namespace lab04
