// Mistake: no `if (i < n)`: the threads of the last block past n store anyway.
// Checked by: Square.MatchesOracleAtEverySize
// Expect: wrote past the end of the output
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

__global__ void square_kernel(const float* x, float* y) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  y[i] = x[i] * x[i];
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  square_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(x, y);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
