// Lab 05: your implementation. The handout, README.md, walks through each step.
//
// Build and test:  cmake --preset lab05 && ctest        (from the repository root; needs nvcc)
// Each function below throws workbook::NotImplemented until you replace its TODO with your code.
// Without a GPU the tests are skipped; the device commands in the handout run them on one.
#include "square.hpp"

#include <workbook/cuda/check.hpp>
#include <workbook/not_implemented.hpp>

#include <cuda_runtime.h>

namespace lab05 {

// TODO(lab05) step 1: a kernel, one thread per element:
//
//   __global__ void square_kernel(const float* x, float* y, std::size_t n) {
//     const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
//     ...
//   }
//
// Steps 2 and 3 turn it into a grid-stride loop with 16-byte (float4) loads and stores.

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  // TODO(lab05) step 1: launch square_kernel with enough blocks of 256 threads to cover n (and
  // nothing when n == 0), then WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel). Steps 2 to 4: a fixed
  // grid that strides over the array, float4 loads when x and y allow them, and the tails.
  throw workbook::NotImplemented("square");
}

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  // TODO(lab05) step 5: when both matrices are contiguous (ld == cols) this is square() on
  // rows * cols elements; otherwise a kernel whose blocks stride over rows and whose threads
  // stride over the columns of a row.
  throw workbook::NotImplemented("square_2d");
}

std::vector<float> time_launches(const std::function<void()>& launch, int warmup, int runs) {
  check_time_launches_arguments(launch, warmup, runs);
  // TODO(lab05) Part B: launch `warmup` times; then for each run record a start event, launch,
  // record a stop event (cudaEventCreate, cudaEventRecord). Wait for the last stop event
  // (cudaEventSynchronize), read each run's cudaEventElapsedTime, destroy the events.
  throw workbook::NotImplemented("time_launches");
}

}  // namespace lab05
