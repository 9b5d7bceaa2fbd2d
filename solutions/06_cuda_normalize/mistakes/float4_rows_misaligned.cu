// Mistake: each row read as float4s, x + r * cols cast to float4* without checking that it is
// 16-byte aligned: with cols % 4 != 0 every row but some starts between two boundaries.
// Checked by: Normalize.EveryRowWidth
// Expect: made an invalid 16-byte read of global memory
// Expect: row r starts at x + r * cols: it is 16-byte aligned only when x is and cols % 4 == 0
#include "one_block_per_row.cuh"

namespace {

constexpr int kThreads = 256;
using Sum = lab06::scaffold::RightSum<kThreads>;

__global__ void normalize_rows(const float* x, float* y, std::size_t cols, float eps) {
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  const float4* x4 = reinterpret_cast<const float4*>(xr);
  const std::size_t quads = cols / 4;
  float sum = 0;
  for (std::size_t q = threadIdx.x; q < quads; q += kThreads) {
    const float4 v = x4[q];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  for (std::size_t c = quads * 4 + threadIdx.x; c < cols; c += kThreads) sum += xr[c];
  const float mean = Sum::block_sum(sum) / float(cols);
  float squares = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads)
    squares += (xr[c] - mean) * (xr[c] - mean);
  const float inv_std = rsqrtf(Sum::block_sum(squares) / float(cols) + eps);
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = (xr[c] - mean) * inv_std;
}

}  // namespace

void lab06::normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  normalize_rows<<<static_cast<unsigned>(rows), kThreads>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_rows);
}
