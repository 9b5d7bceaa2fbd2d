// Mistake: the elementwise kernel without `if (i < n)`: the last block's threads past n store
// anyway, into the memory after y.
// Checked by: Normalize.MisalignedAndInPlace
// Expect: wrote past the end of the output
// Expect: guard the store with `if (i < n)`
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace lab06 {
namespace {

constexpr int kThreads = 256;

__device__ float block_sum(float v) {
  __shared__ float s[kThreads];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  const float total = s[0];
  __syncthreads();
  return total;
}

__global__ void row_statistics(const float* x, float* stats, std::size_t rows, std::size_t cols,
                               float eps) {
  const float* xr = x + blockIdx.x * cols;
  float sum = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) sum += xr[c];
  const float m = block_sum(sum) / float(cols);
  float squares = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) squares += (xr[c] - m) * (xr[c] - m);
  const float r = rsqrtf(block_sum(squares) / float(cols) + eps);
  if (threadIdx.x == 0) stats[blockIdx.x] = m, stats[rows + blockIdx.x] = r;
}

// One thread per element, and every thread stores.
__global__ void apply(const float* x, const float* stats, float* y, std::size_t rows,
                      std::size_t cols) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t row = i / cols < rows ? i / cols : rows - 1;
  y[i] = (x[i] - stats[row]) * stats[rows + row];
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  float* stats = nullptr;
  WORKBOOK_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&stats), 2 * rows * sizeof(float)));
  row_statistics<<<static_cast<unsigned>(rows), kThreads>>>(x, stats, rows, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(row_statistics);
  const std::size_t n = rows * cols;
  apply<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads>>>(x, stats, y, rows,
                                                                            cols);
  WORKBOOK_CUDA_CHECK_LAUNCH(apply);
  WORKBOOK_CUDA_CHECK(cudaFree(stats));
}

}  // namespace lab06
