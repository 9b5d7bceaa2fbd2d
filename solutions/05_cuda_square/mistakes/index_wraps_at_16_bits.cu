// Mistake: the grid-stride loop keeps its index in 16 bits (to save registers): past 65535 it
// wraps to 0 and never reaches n, so on an array of more floats than that the kernel never ends.
// Checked by: Square.MatchesOracleAtEverySize
// Expect: *** HANG: the GPU's work did not finish within 8 s of the last kernel launch
// Expect: In test Square.MatchesOracleAtEverySize
// Expect: The last kernel launched, a grid of 64 blocks of 256 threads, is still running.
// Expect: A kernel runs forever when a loop never reaches its end
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  const unsigned short stride = blockDim.x * gridDim.x;
  for (unsigned short i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = x[i] * x[i];
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  square_kernel<<<64, 256>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
