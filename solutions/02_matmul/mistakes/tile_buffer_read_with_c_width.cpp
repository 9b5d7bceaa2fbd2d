// Mistake: each 4 x 16 tile of C is summed in a local buffer, then copied out; the partial tile at
// the right edge is read with the number of columns it covers in C as the buffer's row stride,
// instead of the buffer's own width (16).
// Checked by: Matmul.LargeK
// Expect: a tile's buffer, with rows 16 apart, read at i * 5 + j
// Expect: index the buffer with its own width
#include "matmul.hpp"

#include <algorithm>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  constexpr std::size_t kTileRows = 4, kTileCols = 16;
  for (std::size_t i0 = 0; i0 < shape.m; i0 += kTileRows) {
    for (std::size_t j0 = 0; j0 < shape.n; j0 += kTileCols) {
      const std::size_t rows = std::min(kTileRows, shape.m - i0);
      const std::size_t cols = std::min(kTileCols, shape.n - j0);
      float tile[kTileRows * kTileCols] = {};
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t p = 0; p < shape.k; ++p)
          for (std::size_t j = 0; j < cols; ++j)
            tile[i * kTileCols + j] += a[(i0 + i) * shape.lda + p] * b[p * shape.ldb + j0 + j];
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j)
          c[(i0 + i) * shape.ldc + j0 + j] = tile[i * cols + j];  // the buffer's rows: kTileCols
    }
  }
}

}  // namespace lab02
