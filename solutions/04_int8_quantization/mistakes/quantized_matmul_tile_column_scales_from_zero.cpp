// Mistake: C computed in tiles of 64 columns, and each tile's epilogue reads the scales of B from
// the start of the array, not from the tile's first column: column j takes b.scale(j % 64).
// Checked by: QuantizedMatmul.IsTheScaledIntegerProduct
// Expect: your output matches b.scale(j % 64) for column j
// Expect: index the scales from j0
#include "quantize.hpp"

#include <algorithm>
#include <vector>

namespace lab04 {

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  constexpr std::size_t kTileColumns = 64;
  std::vector<std::int32_t> sums(a.rows * b.rows);
  matmul_int8(a.values, b.values, sums, a.rows, b.rows, a.cols);
  for (std::size_t j0 = 0; j0 < b.rows; j0 += kTileColumns) {
    const float* column_scale = b.scales.data();  // not offset by j0, as B's values are
    for (std::size_t i = 0; i < a.rows; ++i)
      for (std::size_t j = j0; j < std::min(j0 + kTileColumns, b.rows); ++j) {
        const float scale_b = b.scales.size() == 1 ? b.scale(j) : column_scale[j - j0];
        c[i * b.rows + j] = a.scale(i) * scale_b * static_cast<float>(sums[i * b.rows + j]);
      }
  }
}

}  // namespace lab04
