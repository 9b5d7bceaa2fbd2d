// Mistake: scales[0] of each matrix for every row: right per tensor, wrong with per-row scales.
// Checked by: QuantizedMatmul.IsTheScaledIntegerProduct
// Expect: your output matches the first scale of each matrix for every row
#include "quantize.hpp"

#include <vector>

namespace lab04 {

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  std::vector<std::int32_t> sums(a.rows * b.rows);
  matmul_int8(a.values, b.values, sums, a.rows, b.rows, a.cols);
  const float scale = a.scales[0] * b.scales[0];
  for (std::size_t i = 0; i < sums.size(); ++i) c[i] = scale * static_cast<float>(sums[i]);
}

}  // namespace lab04
