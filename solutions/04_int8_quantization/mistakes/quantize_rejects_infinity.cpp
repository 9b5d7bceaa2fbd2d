// Mistake: quantize rejects infinite values as it rejects NaN, although +-inf must saturate to
// +-127: the exception leaves the test, which expects none. The report shows the line that threw.
// Checked by: Quantize.SaturatesInsteadOfWrapping
// Expect: It threw at solutions/04_int8_quantization/mistakes/quantize_rejects_infinity.cpp:
// Expect: your code threw this exception itself (the line above), on inputs this test expects
// Expect: quantize: x[
#include "quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]))  // the mistake: std::isnan(x[i]); infinities saturate
      throw std::invalid_argument("quantize: x[" + std::to_string(i) + "] is not finite");
    q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(x[i] / scale), -127.0f, 127.0f));
  }
}

}  // namespace lab04
