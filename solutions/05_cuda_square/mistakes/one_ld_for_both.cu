// Mistake: one leading dimension for both matrices (y's): x's rows are read ld_y apart.
// Checked by: Square2d.StridedRowsLeaveThePaddingAlone
// Expect: your output matches x's rows read ld_y apart
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

__global__ void square_2d_kernel(const float* x, float* y, std::size_t ld, std::size_t rows,
                                 std::size_t cols) {
  const std::size_t col = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t row = blockIdx.y * std::size_t{blockDim.y} + threadIdx.y;
  if (row < rows && col < cols) y[row * ld + col] = x[row * ld + col] * x[row * ld + col];
}

}  // namespace

namespace lab05 {

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  if (rows == 0 || cols == 0) return;
  const dim3 block(16, 16);
  const dim3 grid(static_cast<unsigned>((cols + 15) / 16), static_cast<unsigned>((rows + 15) / 16));
  square_2d_kernel<<<grid, block>>>(x, y, ld_y, rows, cols);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_2d_kernel);
}

}  // namespace lab05
