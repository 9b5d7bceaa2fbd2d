// Mistake: symmetric_scale takes the largest |x| with std::max, and checks only that for NaN and
// infinity after the loop. std::max(m, NaN) returns m: a NaN never reaches the max, and passes.
// Checked by: SymmetricScale.RejectsNaNAnywhere
// Expect: rejects an infinity at index 0 but no NaN, there or anywhere: your check compares
#include "quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  float largest = 0.0f;
  for (std::size_t i = 0; i < x.size(); ++i) largest = std::max(largest, std::fabs(x[i]));
  if (std::isnan(largest) || std::isinf(largest))
    for (std::size_t i = 0; i < x.size(); ++i)  // the first one, for the message
      if (!std::isfinite(x[i]))
        throw std::invalid_argument("symmetric_scale: x[" + std::to_string(i) +
                                    "] is not finite: no scale");
  const float scale = largest / 127.0f;
  return scale > 0 ? scale : 1.0f;
}

}  // namespace lab04
