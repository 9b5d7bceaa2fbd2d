// Mistake: x * 2 where the square is x * x.
// Checked by: Square.MatchesOracleAtEverySize
// Expect: your output matches x * 2 (or x + x) instead of x * x
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = x[i] * 2;
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  square_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
