// Mistake: the kernel takes (destination, source), as memcpy does, and square passes (x, y); the
// compiler's complaint about a const float* was silenced with a const_cast. x gets y's squares.
// Checked by: Square.MatchesOracleAtEverySize
// Expect: square: changed its input x
// Expect: An input is read-only
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

__global__ void square_kernel(float* to, const float* from, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) to[i] = from[i] * from[i];
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  square_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(const_cast<float*>(x), y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
