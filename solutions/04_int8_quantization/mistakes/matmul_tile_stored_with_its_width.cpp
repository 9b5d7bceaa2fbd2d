// Mistake: matmul_int8 computes C in tiles of 4 x 64 sums and stores a whole tile's rows 64 apart
// (the tile's own width) instead of n apart (C's): right only where n == 64; elsewhere row t of
// every tile lands t * (n - 64) columns early.
// Checked by: MatmulInt8.SquareTallAndWide
// Expect: row t of each block of 4 rows holds right answers from t *
// Expect: store row t at C + t * ldc
#include "quantize.hpp"

#include <algorithm>
#include <cstdint>

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  constexpr std::size_t kRows = 4, kCols = 64;
  for (std::size_t i0 = 0; i0 < m; i0 += kRows)
    for (std::size_t j0 = 0; j0 < n; j0 += kCols) {
      const std::size_t rows = std::min(kRows, m - i0), cols = std::min(kCols, n - j0);
      std::int32_t tile[kRows][kCols] = {};
      for (std::size_t t = 0; t < rows; ++t)
        for (std::size_t j = 0; j < cols; ++j)
          for (std::size_t k = 0; k < depth; ++k)
            tile[t][j] += std::int32_t{a[(i0 + t) * depth + k]} * b[(j0 + j) * depth + k];
      std::int32_t* out = c.data() + i0 * n + j0;
      for (std::size_t t = 0; t < rows; ++t)
        for (std::size_t j = 0; j < cols; ++j)
          if (rows == kRows && cols == kCols)
            out[t * kCols + j] = tile[t][j];  // the mistake: out[t * n + j]
          else
            out[t * n + j] = tile[t][j];
    }
}

}  // namespace lab04
