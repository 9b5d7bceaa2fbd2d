#pragma once
// The scaffold most of lab 06's buggy kernels share: one block of kThreads threads per row, thread
// t taking columns t, t + kThreads, ...; two passes (the mean, then the squared deviations from
// it), each reduced over the block by Sum::block_sum, which gives every thread the total. A mistake
// file writes its own Sum (its one mistake) and calls normalize_with<kThreads, Sum>. Internal
// linkage, so that it cannot replace the reference's functions.
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace lab06::scaffold {
namespace {

constexpr unsigned kFullWarp = 0xffffffffu;

// The sum of v over a warp, in every thread: a butterfly from offset 16.
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullWarp, v, offset);
  return v;
}

// The right block sum, for mistakes that are elsewhere: warps by shuffles, then the warp totals.
template <int kThreads>
struct RightSum {
  __device__ static float block_sum(float v) {
    __shared__ float partial[kThreads / 32];
    v = warp_sum(v);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    float total = 0;
    for (int w = 0; w < kThreads / 32; ++w) total += partial[w];
    __syncthreads();
    return total;
  }
};

template <int kThreads, class Sum>
__global__ void normalize_rows(const float* x, float* y, std::size_t cols, float eps) {
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  float sum = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) sum += xr[c];
  const float mean = Sum::block_sum(sum) / float(cols);
  float squares = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads)
    squares += (xr[c] - mean) * (xr[c] - mean);
  const float inv_std = rsqrtf(Sum::block_sum(squares) / float(cols) + eps);
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = (xr[c] - mean) * inv_std;
}

template <int kThreads, class Sum>
void normalize_with(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  normalize_rows<kThreads, Sum><<<static_cast<unsigned>(rows), kThreads>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_rows);
}

}  // namespace
}  // namespace lab06::scaffold
