// A student's lab 05, written plainly: one thread per element, a grid that covers the array.
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace lab05 {
namespace {

__global__ void square_rows(const float* x, std::size_t ld_x, float* y, std::size_t ld_y,
                            std::size_t rows, std::size_t cols) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= rows * cols) return;
  const std::size_t r = i / cols, c = i % cols;
  y[r * ld_y + c] = x[r * ld_x + c] * x[r * ld_x + c];
}

__global__ void spin_forever(float* y) {
  volatile float* sink = y;
  for (unsigned long long i = 1; i != 0; i += 2)
    sink[0] = static_cast<float>(i);  // odd i never reaches 0
}

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>((n + 255) / 256);
}

}  // namespace

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  // The student's bug: a loop whose exit condition never becomes true on the device.
  spin_forever<<<1, 1>>>(y);
  square_rows<<<blocks_for(n), 256>>>(x, n, y, n, 1, n);
  WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
}

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  if (rows == 0 || cols == 0) return;
  square_rows<<<blocks_for(rows * cols), 256>>>(x, ld_x, y, ld_y, rows, cols);
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
}

std::vector<float> time_launches(const std::function<void()>& launch, int warmup, int runs) {
  check_time_launches_arguments(launch, warmup, runs);
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<float> ms;
  cudaEvent_t start, stop;
  WORKBOOK_CUDA_CHECK(cudaEventCreate(&start));
  WORKBOOK_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventRecord(start));
    launch();
    WORKBOOK_CUDA_CHECK(cudaEventRecord(stop));
    WORKBOOK_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  WORKBOOK_CUDA_CHECK(cudaEventDestroy(start));
  WORKBOOK_CUDA_CHECK(cudaEventDestroy(stop));
  return ms;
}

}  // namespace lab05
