// Mistake: a fixed grid of 1024 blocks of 256 threads, one element per thread, and no grid-stride
// loop: 262144 elements at most.
// Checked by: Square.MatchesOracleAtEverySize
// Expect: the threads you launched cover only the first 262144 of n = 1048589
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
  if (n == 0) return;
  square_kernel<<<1024, 256>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
