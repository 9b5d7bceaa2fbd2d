// Mistake: a warp per row, 4 warps per block, but the row is blockIdx.x * blockDim.x + warp: block
// b normalizes rows 128 b to 128 b + 3, and the rows between are never written.
// Checked by: Normalize.OneRowAndManyRows
// Expect: rows written in runs of 4 every 128
// Expect: the first row of block b is b * 128
// Lab 06: a warp per row, four rows per block of 128 threads, no __syncthreads at all.
// Rows whose start is 16-byte aligned (x and y aligned, cols % 4 == 0) are read as float4.
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace lab06 {
namespace {

constexpr unsigned kRowsPerBlock = 4;
constexpr unsigned kBlock = 32 * kRowsPerBlock;

__device__ float warp_total(float v) {
  v += __shfl_xor_sync(0xffffffff, v, 16);
  v += __shfl_xor_sync(0xffffffff, v, 8);
  v += __shfl_xor_sync(0xffffffff, v, 4);
  v += __shfl_xor_sync(0xffffffff, v, 2);
  v += __shfl_xor_sync(0xffffffff, v, 1);
  return v;
}

template <bool kVec4>
__global__ void normalize_rows(const float* x, float* y, std::size_t rows, std::size_t cols,
                               float eps) {
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::size_t row = blockIdx.x * std::size_t{blockDim.x} + warp;
  if (row >= rows) return;
  const float* xr = x + row * cols;
  float* yr = y + row * cols;
  const float n = static_cast<float>(cols);

  if constexpr (kVec4) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    float4* y4 = reinterpret_cast<float4*>(yr);
    const std::size_t n4 = cols / 4;
    float s = 0.0f;
    for (std::size_t i = lane; i < n4; i += 32) {
      const float4 v = x4[i];
      s += (v.x + v.y) + (v.z + v.w);
    }
    const float mean = warp_total(s) / n;
    float q = 0.0f;
    for (std::size_t i = lane; i < n4; i += 32) {
      const float4 v = x4[i];
      const float a = v.x - mean, b = v.y - mean, c = v.z - mean, d = v.w - mean;
      q += (a * a + b * b) + (c * c + d * d);
    }
    const float inv = rsqrtf(warp_total(q) / n + eps);
    for (std::size_t i = lane; i < n4; i += 32) {
      const float4 v = x4[i];
      y4[i] = make_float4((v.x - mean) * inv, (v.y - mean) * inv, (v.z - mean) * inv,
                          (v.w - mean) * inv);
    }
  } else {
    float s = 0.0f;
    for (std::size_t c = lane; c < cols; c += 32) s += xr[c];
    const float mean = warp_total(s) / n;
    float q = 0.0f;
    for (std::size_t c = lane; c < cols; c += 32) q += (xr[c] - mean) * (xr[c] - mean);
    const float inv = rsqrtf(warp_total(q) / n + eps);
    for (std::size_t c = lane; c < cols; c += 32) yr[c] = (xr[c] - mean) * inv;
  }
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  const unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  const bool vec4 = cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
                    reinterpret_cast<std::uintptr_t>(y) % 16 == 0;
  if (vec4) {
    normalize_rows<true><<<blocks, kBlock>>>(x, y, rows, cols, eps);
    WORKBOOK_CUDA_CHECK_LAUNCH(normalize_rows<true>);
  } else {
    normalize_rows<false><<<blocks, kBlock>>>(x, y, rows, cols, eps);
    WORKBOOK_CUDA_CHECK_LAUNCH(normalize_rows<false>);
  }
}

}  // namespace lab06
