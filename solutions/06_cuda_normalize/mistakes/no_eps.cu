// Mistake: eps left out, (x - mean) / sqrt(var): wrong wherever var is not much larger than eps.
// Checked by: Normalize.EpsIsAddedToTheVariance
// Expect: your output matches no eps: (x - mean) / sqrt(var)
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

namespace lab06 {
namespace {

constexpr int kThreads = 256;

// The sum of v over the block, in every thread.
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

__global__ void normalize_rows(const float* x, float* y, std::size_t cols, float eps) {
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  float sum = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) sum += xr[c];
  const float mean = block_sum(sum) / float(cols);
  float squares = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads)
    squares += (xr[c] - mean) * (xr[c] - mean);
  const float var = block_sum(squares) / float(cols);
  const float inv_std = 1.0f / sqrtf(var);
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = (xr[c] - mean) * inv_std;
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  normalize_rows<<<static_cast<unsigned>(rows), kThreads>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_rows);
}

}  // namespace lab06
