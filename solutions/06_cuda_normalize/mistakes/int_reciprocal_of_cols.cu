// Mistake: `const float inv_cols = 1 / cols;` divides integers: 0 for every cols > 1, so the
// mean and the variance are 0.
// Checked by: Normalize.EveryRowWidth
// Expect: 1 / cols is 0 in integer arithmetic
// Lab 06: one warp per row, rows strided over a fixed grid (4 warps per block). Shuffle
// reductions; multiply by 1 / cols once instead of dividing twice per row.
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <algorithm>

namespace lab06 {
namespace {

constexpr int kWarps = 4;

__device__ __forceinline__ float reduce_warp(float v) {
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void normalize_kernel(const float* x, float* y, std::size_t rows, std::size_t cols,
                                 float eps) {
  const int lane = threadIdx.x & 31;
  const std::size_t first_row = blockIdx.x * std::size_t{kWarps} + threadIdx.x / 32;
  const std::size_t row_step = std::size_t{gridDim.x} * kWarps;
  const float inv_cols = 1 / cols;

  for (std::size_t r = first_row; r < rows; r += row_step) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    float s = 0.0f;
    for (std::size_t c = lane; c < cols; c += 32) s += in[c];
    const float mean = reduce_warp(s) * inv_cols;
    float q = 0.0f;
    for (std::size_t c = lane; c < cols; c += 32) q += (in[c] - mean) * (in[c] - mean);
    const float rstd = rsqrtf(reduce_warp(q) * inv_cols + eps);
    for (std::size_t c = lane; c < cols; c += 32) out[c] = (in[c] - mean) * rstd;
  }
}

unsigned grid_for(std::size_t rows) {
  static int max_blocks = 0;
  if (max_blocks == 0) {
    int dev = 0, sms = 0, per_sm = 0;
    WORKBOOK_CUDA_CHECK(cudaGetDevice(&dev));
    WORKBOOK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    WORKBOOK_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, normalize_kernel, kWarps * 32, 0));
    max_blocks = sms * per_sm;
  }
  const std::size_t wanted = (rows + kWarps - 1) / kWarps;
  return static_cast<unsigned>(std::min<std::size_t>(wanted, max_blocks));
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  normalize_kernel<<<grid_for(rows), kWarps * 32>>>(x, y, rows, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_kernel);
}

}  // namespace lab06
