// Lab 02: your implementation. The handout, README.md, walks through each step.
//
// Build and test:  cmake --preset lab02 && ctest        (from the repository root)
// matmul throws workbook::NotImplemented until you replace its TODO with a kernel.
#include "matmul.hpp"

#include <workbook/not_implemented.hpp>

#include <algorithm>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab02 {

// One SIMD register of floats for this build (-march=native): Batch::size is 16 with AVX-512, 8
// with AVX2, 4 with SSE or NEON. Write Batch::size, never 16: the same code must be right anywhere.
using Batch = xsimd::batch<float>;

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);  // sizes, leading dimensions, C apart from A and B
  // TODO(lab02): C = A * B, overwriting C. The handout's steps, each measured with lab02_perf:
  //   step 1: the definition, three loops i-j-k; element (i, j) of C is c[i * shape.ldc + j], and
  //           k = 0 gives zeros. Correct for every shape first (ctest --preset lab02 -R Matmul);
  //   step 2: the loops in the order i-k-j, so that the innermost one runs along rows of B and C;
  //   step 3: cache blocking: blocks of k and j sized so that a block of B stays in half the L2;
  //   step 4: register blocking: a tile of C, 6 rows x 4 Batches with AVX-512 (6 x 2 with AVX2),
  //           in accumulators updated with xsimd::fma for each p; leftovers through i-k-j;
  //   step 5: packing: copy each block of A and B into contiguous, zero-padded panels first, so
  //           that every tile, the last ones too, goes through the fast kernel.
  throw workbook::NotImplemented("matmul");
}

}  // namespace lab02
