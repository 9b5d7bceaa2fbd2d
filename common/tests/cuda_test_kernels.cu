// Kernels that the GPU harness tests launch: one that writes a given number of elements, and a
// launch with an impossible configuration.
#include <workbook/cuda/check.hpp>

#include <cstddef>

namespace workbook_test {
namespace {

__global__ void fill_kernel(float* y, std::size_t n, float value) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = value;
}

// Waits for a flag that nothing sets: a kernel that never ends.
__global__ void spin_kernel(const volatile int* flag) {
  while (*flag == 0) {
  }
}

}  // namespace

void spin_forever() {
  int* flag = nullptr;
  WORKBOOK_CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  WORKBOOK_CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
  spin_kernel<<<1, 32>>>(flag);
  WORKBOOK_CUDA_CHECK_LAUNCH(spin_kernel);
}

void fill(float* y, std::size_t n, float value) {
  if (n == 0) return;
  fill_kernel<<<(n + 255) / 256, 256>>>(y, n, value);
  WORKBOOK_CUDA_CHECK_LAUNCH(fill_kernel);
}

void launch_with_threads(int threads) {
  fill_kernel<<<1, threads>>>(nullptr, 0, 0.0f);
  WORKBOOK_CUDA_CHECK_LAUNCH(fill_kernel);
}

void launch_with_grid(unsigned x, unsigned y, unsigned threads) {
  fill_kernel<<<dim3(x, y), threads>>>(nullptr, 0, 0.0f);
  WORKBOOK_CUDA_CHECK_LAUNCH(fill_kernel);
}

}  // namespace workbook_test
