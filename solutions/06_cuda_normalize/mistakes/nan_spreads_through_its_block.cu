// Mistake: four rows per block (a warp each), each row's sum taken over the whole block with the
// other rows' values masked out by multiplying them with 0, and 0 * NaN is NaN: a NaN reaches
// every row of its block.
// Checked by: Normalize.NaNStaysInItsRow
// Expect: your output matches a NaN from one row in rows that hold none
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

namespace lab06 {
namespace {

constexpr int kRows = 4, kThreads = 32 * kRows;

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

// The sum of v over the threads of this thread's row (its warp).
__device__ float row_sum(float v) {
  const int warp = threadIdx.x / 32;
  float mine = 0;
  for (int k = 0; k < kRows; ++k) {
    const float total = block_sum(v * float(warp == k));  // only row k's threads count
    if (warp == k) mine = total;
  }
  return mine;
}

__global__ void normalize_rows(const float* x, float* y, std::size_t rows, std::size_t cols,
                               float eps) {
  const std::size_t row = blockIdx.x * std::size_t{kRows} + threadIdx.x / 32;
  const bool inside = row < rows;  // no early return: every thread takes part in block_sum
  const float* xr = x + row * cols;
  float sum = 0;
  for (std::size_t c = threadIdx.x % 32; inside && c < cols; c += 32) sum += xr[c];
  const float mean = row_sum(sum) / float(cols);
  float squares = 0;
  for (std::size_t c = threadIdx.x % 32; inside && c < cols; c += 32)
    squares += (xr[c] - mean) * (xr[c] - mean);
  const float inv_std = rsqrtf(row_sum(squares) / float(cols) + eps);
  for (std::size_t c = threadIdx.x % 32; inside && c < cols; c += 32)
    y[row * cols + c] = (xr[c] - mean) * inv_std;
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  normalize_rows<<<static_cast<unsigned>((rows + kRows - 1) / kRows), kThreads>>>(x, y, rows, cols,
                                                                                  eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_rows);
}

}  // namespace lab06
