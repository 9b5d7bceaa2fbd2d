// Mistake: one thread per column and a shared array of 256: rows wider than 256 columns keep
// their other columns unwritten (and their statistics miss them).
// Checked by: Normalize.EveryRowWidth
// Expect: your output matches only the first 256 columns of each row written
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

namespace lab06 {
namespace {

__global__ void normalize_rows(const float* x, float* y, std::size_t cols, float eps) {
  __shared__ float s[256];
  const unsigned t = threadIdx.x;
  const float* xr = x + blockIdx.x * cols;
  const float v = t < cols ? xr[t] : 0.0f;
  s[t] = v;
  __syncthreads();
  for (unsigned half = 128; half > 0; half /= 2) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  const float mean = s[0] / float(cols);
  __syncthreads();
  s[t] = t < cols ? (v - mean) * (v - mean) : 0.0f;
  __syncthreads();
  for (unsigned half = 128; half > 0; half /= 2) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  const float var = s[0] / float(cols);
  if (t < cols) y[blockIdx.x * cols + t] = (v - mean) * rsqrtf(var + eps);
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  normalize_rows<<<static_cast<unsigned>(rows), 256>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_rows);
}

}  // namespace lab06
