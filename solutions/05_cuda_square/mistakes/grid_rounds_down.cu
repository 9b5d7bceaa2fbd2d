// Mistake: a grid of n / 256 blocks, rounded down (at least one, after the launch of 0 blocks
// failed): the last n % 256 elements get no thread.
// Checked by: Square.MisalignedStarts
// Expect: your output matches a grid of n / threads blocks, rounded down
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <algorithm>

namespace {

__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  const std::size_t blocks = std::max<std::size_t>(n / 256, 1);
  square_kernel<<<static_cast<unsigned>(blocks), 256>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
