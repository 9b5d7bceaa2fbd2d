// Mistake: a warp per row, each thread a running (count, mean, M2) over its columns, merged across
// the warp by shuffles, but the merge leaves out M2's d^2 * na * nb / n term: the variance is only
// the spread within each thread's columns.
// Checked by: Normalize.EpsIsAddedToTheVariance
// Expect: the spread between the partial means (Welford's merge without its delta term)
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

struct Welford {
  float count = 0, mean = 0, m2 = 0;
};

__global__ void normalize_rows(const float* x, float* y, std::size_t cols, float eps) {
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  Welford w;
  for (std::size_t c = threadIdx.x; c < cols; c += 32) {
    w.count += 1;
    const float d = xr[c] - w.mean;
    w.mean += d / w.count;
    w.m2 += d * (xr[c] - w.mean);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const float count = __shfl_xor_sync(0xffffffffu, w.count, offset);
    const float mean = __shfl_xor_sync(0xffffffffu, w.mean, offset);
    const float m2 = __shfl_xor_sync(0xffffffffu, w.m2, offset);
    const float n = w.count + count;
    if (n == 0) continue;
    w.mean += (mean - w.mean) * (count / n);
    w.m2 += m2;  // + d * d * w.count * count / n is missing
    w.count = n;
  }
  const float inv_std = rsqrtf(w.m2 / float(cols) + eps);
  for (std::size_t c = threadIdx.x; c < cols; c += 32) yr[c] = (xr[c] - w.mean) * inv_std;
}

}  // namespace

void lab06::normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  normalize_rows<<<static_cast<unsigned>(rows), 32>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_rows);
}
