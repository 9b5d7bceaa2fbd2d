// Mistake: the scales applied twice: once to each int32 sum, and again to the result.
// Checked by: QuantizedMatmul.IsTheScaledIntegerProduct
// Expect: your output matches the scales applied twice
#include "quantize.hpp"

#include <vector>

namespace lab04 {

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  std::vector<std::int32_t> sums(a.rows * b.rows);
  matmul_int8(a.values, b.values, sums, a.rows, b.rows, a.cols);
  for (std::size_t i = 0; i < sums.size(); ++i) {
    const float scale = a.scale(i / b.rows) * b.scale(i % b.rows);
    const float dequantized = scale * static_cast<float>(sums[i]);
    c[i] = scale * dequantized;
  }
}

}  // namespace lab04
