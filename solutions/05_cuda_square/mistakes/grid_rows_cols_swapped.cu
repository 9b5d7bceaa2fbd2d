// Mistake: the row taken from blockIdx.x / threadIdx.x, on a grid whose x runs over the columns:
// rows past the columns' grid are never reached.
// Checked by: Square2d.StridedRowsLeaveThePaddingAlone
// Expect: your output matches rows and columns swapped between the grid and the index
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

__global__ void square_2d_kernel(const float* x, std::size_t ld_x, float* y, std::size_t ld_y,
                                 std::size_t rows, std::size_t cols) {
  const std::size_t row = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t col = blockIdx.y * std::size_t{blockDim.y} + threadIdx.y;
  if (row < rows && col < cols) y[row * ld_y + col] = x[row * ld_x + col] * x[row * ld_x + col];
}

}  // namespace

namespace lab05 {

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  if (rows == 0 || cols == 0) return;
  const dim3 block(16, 16);
  const dim3 grid(static_cast<unsigned>((cols + 15) / 16), static_cast<unsigned>((rows + 15) / 16));
  square_2d_kernel<<<grid, block>>>(x, ld_x, y, ld_y, rows, cols);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_2d_kernel);
}

}  // namespace lab05
