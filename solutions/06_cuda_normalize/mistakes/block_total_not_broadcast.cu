// Mistake: warp 0 adds the warps' sums but never shares the total: warps 1 to 7 normalize their
// columns with their own warp's statistics.
// Checked by: Normalize.OneRowAndManyRows
// Expect: each warp normalizing with statistics of its own, not the row's
// Lab 06, step 3: one block of 256 threads per row. Each warp reduces with shuffles, the 8 warp
// sums meet in shared memory and warp 0 adds them up. Two passes (mean, then squared deviations).
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace lab06 {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ float warp_reduce(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ float block_reduce(float v) {
  __shared__ float warp_sums[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  v = warp_reduce(v);
  __syncthreads();  // warp_sums may still be read from the previous call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_reduce(lane < kWarps ? warp_sums[lane] : 0.0f);
  return v;
}

__global__ void layer_norm_rows(const float* x, float* y, std::size_t cols, float eps) {
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;

  float sum = 0.0f;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) sum += xr[c];
  const float mean = block_reduce(sum) / static_cast<float>(cols);

  float m2 = 0.0f;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) {
    const float d = xr[c] - mean;
    m2 += d * d;
  }
  const float rstd = rsqrtf(block_reduce(m2) / static_cast<float>(cols) + eps);

  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = (xr[c] - mean) * rstd;
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  layer_norm_rows<<<static_cast<unsigned>(rows), kThreads>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(layer_norm_rows);
}

}  // namespace lab06
