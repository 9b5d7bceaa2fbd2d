// Mistake: the handout's +128 offset in a scalar loop, with the biased sum and its correction
// each converted to float before they are subtracted: past 2^24 each rounds by units.
// Checked by: QuantizedMatmul.IsTheScaledIntegerProduct
// Expect: the offset's biased sum and its correction each rounded to float32 before they cancel
// Expect: subtract them in int32 first
#include "quantize.hpp"

#include <cstdint>

namespace lab04 {

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  const std::size_t depth = a.cols;
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < b.rows; ++j) {
      std::int32_t biased = 0, correction = 0;  // a + 128 is an unsigned byte, as for vpdpbusd
      for (std::size_t k = 0; k < depth; ++k) {
        biased += (a.values[i * depth + k] + 128) * b.values[j * depth + k];
        correction += 128 * b.values[j * depth + k];
      }
      c[i * b.rows + j] =
          a.scale(i) * b.scale(j) * (static_cast<float>(biased) - static_cast<float>(correction));
    }
}

}  // namespace lab04
