// Mistake: a grid-stride loop that steps by blockDim.x, not blockDim.x * gridDim.x: every block
// squares all the elements after its start. Out of place that only repeats the work; in place the
// blocks square each other's results, in whatever order they run: a race.
// Checked by: Square.InPlace
// Expect: compute-sanitizer --tool racecheck
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += blockDim.x)
    y[i] = x[i] * x[i];
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  square_kernel<<<264, 256>>>(x, y, n);  // two blocks per SM of an H100
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
