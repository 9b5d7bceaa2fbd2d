// Mistake: a warp per row whose mean loop starts at column 0 in every lane (not at the lane): every
// lane adds the same columns, so the mean is 32 times a sum of every 32nd element; the spread
// around it is computed right.
// Checked by: Normalize.EveryRowWidth
// Expect: rows normalized with statistics other than their own
// Expect: s' =
// Lab 06: one warp per row, 8 rows per block of 256 threads. Both reductions are warp shuffles
// (__shfl_xor_sync: every lane ends with the total), the variance from x - mean (two passes).
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace lab06 {
namespace {

constexpr unsigned kWarpsPerBlock = 8;
constexpr unsigned kFull = 0xffffffffu;

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFull, v, offset);
  return v;
}

__global__ void normalize_warp_per_row(const float* x, float* y, std::size_t rows, std::size_t cols,
                                       float eps) {
  const unsigned lane = threadIdx.x % 32;
  const std::size_t row = blockIdx.x * std::size_t{kWarpsPerBlock} + threadIdx.x / 32;
  if (row >= rows) return;  // the whole warp leaves together
  const float* xr = x + row * cols;
  float* yr = y + row * cols;

  float sum = 0.0f;
  for (std::size_t c = 0; c < cols; c += 32) sum += xr[c];
  const float mean = warp_sum(sum) / static_cast<float>(cols);

  float sq = 0.0f;
  for (std::size_t c = lane; c < cols; c += 32) {
    const float d = xr[c] - mean;
    sq += d * d;
  }
  const float var = warp_sum(sq) / static_cast<float>(cols);
  const float inv_std = rsqrtf(var + eps);

  for (std::size_t c = lane; c < cols; c += 32) yr[c] = (xr[c] - mean) * inv_std;
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  const unsigned blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  normalize_warp_per_row<<<blocks, kWarpsPerBlock * 32>>>(x, y, rows, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_warp_per_row);
}

}  // namespace lab06
