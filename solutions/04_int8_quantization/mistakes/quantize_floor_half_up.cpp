// Mistake: floor(x / scale + 0.5), which rounds every tie up (-2.5 -> -2, 2.5 -> 3).
// Checked by: Quantize.RoundsHalfToEven
// Expect: floor(x / scale + 0.5): ties rounded up, not to the even neighbour
#include "quantize.hpp"

#include <algorithm>
#include <cmath>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  for (std::size_t i = 0; i < x.size(); ++i)
    q[i] = static_cast<std::int8_t>(std::clamp(std::floor(x[i] / scale + 0.5f), -127.0f, 127.0f));
}

}  // namespace lab04
