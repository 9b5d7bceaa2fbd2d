// Mistake: the kernel is launched even when n == 0: a grid of 0 blocks is an invalid launch.
// Checked by: Square.ZeroLengthWritesNothing
// Expect: the launch was a grid of 0 blocks of 256 threads: a grid with no blocks
// Expect: launch nothing at all when n is 0
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  square_kernel<<<blocks, 256>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
