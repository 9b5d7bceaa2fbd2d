// Mistake: square_2d's 2-D kernel guards with `row < rows || col < cols`: a thread past the last
// column of an existing row (or past the last row of an existing column) stores anyway.
// Checked by: Square2d.ContiguousMatchesOracle
// Expect: wrote past the end of the output
// Expect: `if (row < rows && col < cols)`
// Lab 05: square (one thread per element), square_2d (a 2-D grid of 32 x 8 blocks), and
// time_launches with CUDA events.
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace lab05 {

__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}

// col from x (so a warp reads 32 neighbouring floats of a row), row from y
__global__ void square_2d_kernel(const float* x, std::size_t ld_x, float* y, std::size_t ld_y,
                                 std::size_t rows, std::size_t cols) {
  const std::size_t col = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t row = blockIdx.y * std::size_t{blockDim.y} + threadIdx.y;
  if (row < rows || col < cols) {
    const float v = x[row * ld_x + col];
    y[row * ld_y + col] = v * v;
  }
}

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  square_kernel<<<blocks, 256>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  if (rows == 0 || cols == 0) return;
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((cols + block.x - 1) / block.x),
                  static_cast<unsigned>((rows + block.y - 1) / block.y));
  square_2d_kernel<<<grid, block>>>(x, ld_x, y, ld_y, rows, cols);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_2d_kernel);
}

std::vector<float> time_launches(const std::function<void()>& launch, int warmup, int runs) {
  check_time_launches_arguments(launch, warmup, runs);
  for (int w = 0; w < warmup; ++w) launch();

  std::vector<cudaEvent_t> events(2 * runs);
  for (auto& e : events) WORKBOOK_CUDA_CHECK(cudaEventCreate(&e));
  for (int r = 0; r < runs; ++r) {
    WORKBOOK_CUDA_CHECK(cudaEventRecord(events[2 * r]));
    launch();
    WORKBOOK_CUDA_CHECK(cudaEventRecord(events[2 * r + 1]));
  }
  WORKBOOK_CUDA_CHECK(cudaEventSynchronize(events.back()));

  std::vector<float> times(runs);
  for (int r = 0; r < runs; ++r)
    WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&times[r], events[2 * r], events[2 * r + 1]));
  for (auto& e : events) WORKBOOK_CUDA_CHECK(cudaEventDestroy(e));
  return times;
}

}  // namespace lab05
