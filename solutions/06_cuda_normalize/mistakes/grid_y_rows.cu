// Mistake: the elementwise kernel puts the rows on grid.y, whose limit is 65535: the launch fails
// for 65536 rows.
// Checked by: Normalize.LargeMatrices
// Expect: grid.y = 65536, over this GPU's limit of 65535 for grid.y
// Lab 06, step 1: three kernels, as eager PyTorch does it. row_mean and row_inv_std write one
// float per row (a block of 256 threads per row, shared-memory tree); normalize_elements then
// normalizes every element on a 2-D grid: x over the columns, y over the rows.
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace lab06 {
namespace {

constexpr int kThreads = 256;

// Sum of v over the block; every thread gets the result.
__device__ float block_reduce(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();  // shared may be reused right after
  return total;
}

__global__ void row_mean(const float* x, std::size_t cols, float* mean) {
  __shared__ float partial[kThreads];
  const float* xr = x + blockIdx.x * cols;
  float s = 0.0f;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) s += xr[c];
  const float total = block_reduce(s, partial);
  if (threadIdx.x == 0) mean[blockIdx.x] = total / static_cast<float>(cols);
}

__global__ void row_inv_std(const float* x, std::size_t cols, const float* mean, float eps,
                            float* inv_std) {
  __shared__ float partial[kThreads];
  const float* xr = x + blockIdx.x * cols;
  const float m = mean[blockIdx.x];
  float s = 0.0f;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) {
    const float d = xr[c] - m;
    s += d * d;
  }
  const float total = block_reduce(s, partial);
  if (threadIdx.x == 0) inv_std[blockIdx.x] = rsqrtf(total / static_cast<float>(cols) + eps);
}

__global__ void normalize_elements(const float* x, float* y, std::size_t cols, const float* mean,
                                   const float* inv_std) {
  const std::size_t row = blockIdx.y;
  const std::size_t col = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (col >= cols) return;
  const std::size_t i = row * cols + col;
  y[i] = (x[i] - mean[row]) * inv_std[row];
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;

  float* stats = nullptr;  // rows means, then rows 1 / std
  WORKBOOK_CUDA_CHECK(cudaMallocAsync(&stats, 2 * rows * sizeof(float), 0));
  float* mean = stats;
  float* inv_std = stats + rows;

  const unsigned row_blocks = static_cast<unsigned>(rows);
  row_mean<<<row_blocks, kThreads>>>(x, cols, mean);
  WORKBOOK_CUDA_CHECK_LAUNCH(row_mean);
  row_inv_std<<<row_blocks, kThreads>>>(x, cols, mean, eps, inv_std);
  WORKBOOK_CUDA_CHECK_LAUNCH(row_inv_std);

  const dim3 grid(static_cast<unsigned>((cols + kThreads - 1) / kThreads),
                  static_cast<unsigned>(rows));
  normalize_elements<<<grid, kThreads>>>(x, y, cols, mean, inv_std);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_elements);

  WORKBOOK_CUDA_CHECK(cudaFreeAsync(stats, 0));
}

}  // namespace lab06
