#pragma once
// The reference's kernels and their launchers, shared by square.cu and the numbered versions
// (versions.cu), which time variants of the same launch. Everything here has internal linkage
// (an unnamed namespace): each of the two .cu files compiles its own copy of the kernels.
#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace lab05::kernels {
namespace {

constexpr int kThreads = 256;
// float4s per thread in the reference: enough loads in flight per SM, with blocks short-lived
// enough that the block scheduler keeps every SM full to the end (measured on the H100: see the
// bench and the handout).
constexpr int kPerThread = 2;

__device__ __forceinline__ float4 square4(float4 v) {
  return make_float4(v.x * v.x, v.y * v.y, v.z * v.z, v.w * v.w);
}

// A rows x cols matrix whose rows start ld_x (x) and ld_y (y) floats apart; a flat array is one
// row. In every row of x and of y the first `head` floats come before a 16-byte boundary (the
// launcher checks that this is the same everywhere). Each block squares kThreads x kPerThread
// float4s of a row (blockIdx.x picks which, blockIdx.y the row, striding when there are more rows
// than a grid has in y): all its loads are issued before the first store. The at most 3 + 3 floats
// before the first and after the last float4 of a row go to the first threads of block x = 0.
template <int kVectors>
__global__ void square_rows_vec4(const float* __restrict__ x, std::size_t ld_x,
                                 float* __restrict__ y, std::size_t ld_y, std::size_t rows,
                                 std::size_t cols, unsigned head) {
  const std::size_t n4 = (cols - head) / 4, tail = head + 4 * n4;
  const std::size_t first = blockIdx.x * std::size_t{blockDim.x} * kVectors + threadIdx.x;
  for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const float* xr = x + r * ld_x;
    float* yr = y + r * ld_y;
    const float4* x4 = reinterpret_cast<const float4*>(xr + head);
    float4* y4 = reinterpret_cast<float4*>(yr + head);
    float4 v[kVectors];
#pragma unroll
    for (int k = 0; k < kVectors; ++k) {
      const std::size_t i = first + static_cast<std::size_t>(k) * blockDim.x;
      v[k] = i < n4 ? x4[i] : make_float4(0, 0, 0, 0);
    }
#pragma unroll
    for (int k = 0; k < kVectors; ++k) {
      const std::size_t i = first + static_cast<std::size_t>(k) * blockDim.x;
      if (i < n4) y4[i] = square4(v[k]);
    }
    if (blockIdx.x == 0 && threadIdx.x < 8) {
      const std::size_t j = threadIdx.x < 4 ? threadIdx.x : tail + (threadIdx.x - 4);
      if ((threadIdx.x < 4 && j < head) || (threadIdx.x >= 4 && j < cols)) yr[j] = xr[j] * xr[j];
    }
  }
}

// The same without float4 (rows of x and y not equally aligned): kVectors floats per thread.
template <int kVectors>
__global__ void square_rows_scalar(const float* __restrict__ x, std::size_t ld_x,
                                   float* __restrict__ y, std::size_t ld_y, std::size_t rows,
                                   std::size_t cols) {
  const std::size_t first = blockIdx.x * std::size_t{blockDim.x} * kVectors + threadIdx.x;
  for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
    float v[kVectors];
#pragma unroll
    for (int k = 0; k < kVectors; ++k) {
      const std::size_t c = first + static_cast<std::size_t>(k) * blockDim.x;
      v[k] = c < cols ? x[r * ld_x + c] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < kVectors; ++k) {
      const std::size_t c = first + static_cast<std::size_t>(k) * blockDim.x;
      if (c < cols) y[r * ld_y + c] = v[k] * v[k];
    }
  }
}

// y = x^2 over a rows x cols matrix (rows, cols > 0): the float4 kernel when every row of x and y
// has the same offset from a 16-byte boundary, else the scalar one. The grid covers a row once in
// x; in y it has one block per row, up to the 65535 the hardware allows (then blocks loop).
template <int kVectors = kPerThread, int kBlock = kThreads>
void launch_square_rows(const float* x, std::size_t ld_x, float* y, std::size_t ld_y,
                        std::size_t rows, std::size_t cols) {
  const auto offset = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16; };
  const unsigned grid_y = static_cast<unsigned>(std::min<std::size_t>(rows, 65535));
  const bool same_alignment =
      offset(x) == offset(y) && (rows == 1 || (ld_x % 4 == 0 && ld_y % 4 == 0));
  if (same_alignment) {
    const unsigned head =
        static_cast<unsigned>(std::min<std::size_t>((16 - offset(x)) % 16 / 4, cols));
    const std::size_t n4 = (cols - head) / 4, per_block = std::size_t{kBlock} * kVectors;
    const unsigned grid_x =
        static_cast<unsigned>(std::max<std::size_t>(1, (n4 + per_block - 1) / per_block));
    square_rows_vec4<kVectors>
        <<<dim3(grid_x, grid_y), kBlock>>>(x, ld_x, y, ld_y, rows, cols, head);
    WORKBOOK_CUDA_CHECK_LAUNCH(square_rows_vec4);
  } else {
    const std::size_t per_block = std::size_t{kBlock} * 4 * kVectors;
    const unsigned grid_x = static_cast<unsigned>((cols + per_block - 1) / per_block);
    square_rows_scalar<4 * kVectors>
        <<<dim3(grid_x, grid_y), kBlock>>>(x, ld_x, y, ld_y, rows, cols);
    WORKBOOK_CUDA_CHECK_LAUNCH(square_rows_scalar);
  }
}

}  // namespace
}  // namespace lab05::kernels
