// Mistake: C computed in tiles of 6 rows, and each tile's epilogue scales all its rows with the
// scale of the tile's first row, a.scale(i0), where row i takes a.scale(i).
// Checked by: QuantizedMatmul.IsTheScaledIntegerProduct
// Expect: your output matches a.scale(i - i % 6) for row i
// Expect: each row of C takes its own row's scale
#include "quantize.hpp"

#include <algorithm>
#include <vector>

namespace lab04 {

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  constexpr std::size_t kTileRows = 6;
  std::vector<std::int32_t> sums(a.rows * b.rows);
  matmul_int8(a.values, b.values, sums, a.rows, b.rows, a.cols);
  for (std::size_t i0 = 0; i0 < a.rows; i0 += kTileRows) {
    const float row_scale = a.scale(i0);  // the tile's first row: each row has its own
    for (std::size_t i = i0; i < std::min(i0 + kTileRows, a.rows); ++i)
      for (std::size_t j = 0; j < b.rows; ++j)
        c[i * b.rows + j] = row_scale * b.scale(j) * static_cast<float>(sums[i * b.rows + j]);
  }
}

}  // namespace lab04
