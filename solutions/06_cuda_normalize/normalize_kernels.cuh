#pragma once
// The reference kernel and its launcher, shared by normalize.cu and the bench's versions.
// Internal linkage: each .cu file compiles its own copy.
#include "reduce.cuh"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace lab06::kernels {
namespace {

// A row in registers. kThreads threads share a row (a warp, or a whole block); each holds kVecs
// float4s of it (kVec4), or 4 kVecs single floats (rows that are not 16-byte aligned). All loads
// are issued at once, then: the mean (one reduction), the squared deviations from it, read from
// registers (a second reduction: the two-pass formula, exact in the sense of the oracle, at no
// extra traffic), and y written from the same registers. x is read once, y written once.
// A warp per row needs no barrier at all, and a block of four warps holds four rows; a row of
// several warps has its block to itself (its warps meet in shared memory).
template <int kThreads>
constexpr int kRowsPerBlock = kThreads == 32 ? 4 : 1;

template <int kThreads, int kVecs, bool kVec4>
__global__ void __launch_bounds__(kThreads* kRowsPerBlock<kThreads>)
    normalize_in_registers(const float* __restrict__ x, float* __restrict__ y, std::size_t rows,
                           std::size_t cols, float eps) {
  static_assert(kThreads % 32 == 0, "a row is handled by whole warps");
  __shared__ float partial[kThreads / 32];
  const std::size_t row =
      blockIdx.x * std::size_t{kRowsPerBlock<kThreads>} + threadIdx.x / kThreads;
  if (row >= rows) return;  // whole warps only: rows of one block never share a barrier
  const int lane = threadIdx.x % kThreads;
  constexpr int kFloats = 4 * kVecs;
  float v[kFloats];
  const float* xr = x + row * cols;
  float* yr = y + row * cols;
  // Element e of this thread is column column_of(e); zero and left out when past the row's end.
  auto column_of = [&](int e) {
    return kVec4 ? (std::size_t(lane) + std::size_t(e / 4) * kThreads) * 4 + e % 4
                 : std::size_t(lane) + std::size_t(e) * kThreads;
  };
  if constexpr (kVec4) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const std::size_t c = (std::size_t(lane) + std::size_t(k) * kThreads) * 4;
      const float4 f =
          c < cols ? *reinterpret_cast<const float4*>(xr + c) : make_float4(0, 0, 0, 0);
      v[4 * k] = f.x, v[4 * k + 1] = f.y, v[4 * k + 2] = f.z, v[4 * k + 3] = f.w;
    }
  } else {
#pragma unroll
    for (int e = 0; e < kFloats; ++e) v[e] = column_of(e) < cols ? xr[column_of(e)] : 0.0f;
  }
  float sum = 0;
#pragma unroll
  for (int e = 0; e < kFloats; ++e) sum += v[e];
  const float mean = block_sum<kThreads>(sum, partial) / float(cols);
  float squares = 0;
#pragma unroll
  for (int e = 0; e < kFloats; ++e) {
    const float d = column_of(e) < cols ? v[e] - mean : 0.0f;
    squares = fmaf(d, d, squares);
  }
  const float inv_std = rsqrtf(block_sum<kThreads>(squares, partial) / float(cols) + eps);
  if constexpr (kVec4) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const std::size_t c = (std::size_t(lane) + std::size_t(k) * kThreads) * 4;
      if (c < cols)
        *reinterpret_cast<float4*>(yr + c) =
            make_float4((v[4 * k] - mean) * inv_std, (v[4 * k + 1] - mean) * inv_std,
                        (v[4 * k + 2] - mean) * inv_std, (v[4 * k + 3] - mean) * inv_std);
    }
  } else {
#pragma unroll
    for (int e = 0; e < kFloats; ++e)
      if (column_of(e) < cols) yr[column_of(e)] = (v[e] - mean) * inv_std;
  }
}

// Rows too wide for registers: one block per row, Welford's statistics in one pass over the row,
// then a second pass to normalize (x read twice; the second read mostly hits the L2 cache).
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    normalize_welford(const float* __restrict__ x, float* __restrict__ y, std::size_t cols,
                      float eps) {
  __shared__ Welford partial[kThreads / 32];
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  Welford w;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) w.add(xr[c]);
  w = warp_welford(w);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = w;
  __syncthreads();
  Welford row;
  for (int k = 0; k < kThreads / 32; ++k) row.merge(partial[k]);
  const float mean = row.mean, inv_std = rsqrtf(row.m2 / float(cols) + eps);
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = (xr[c] - mean) * inv_std;
}

template <int kThreads, int kVecs>
void launch_in_registers(const float* x, float* y, std::size_t rows, std::size_t cols, float eps,
                         bool vec4) {
  constexpr int rows_per_block = kRowsPerBlock<kThreads>;
  const unsigned blocks = static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block);
  const unsigned threads = kThreads * rows_per_block;
  if (vec4) {
    normalize_in_registers<kThreads, kVecs, true><<<blocks, threads>>>(x, y, rows, cols, eps);
    WORKBOOK_CUDA_CHECK_LAUNCH(normalize_in_registers);
  } else {
    normalize_in_registers<kThreads, kVecs, false><<<blocks, threads>>>(x, y, rows, cols, eps);
    WORKBOOK_CUDA_CHECK_LAUNCH(normalize_in_registers);
  }
}

void launch_welford(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  normalize_welford<256><<<static_cast<unsigned>(rows), 256>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_welford);
}

// The reference's choice: the fewest threads per row that hold it in 8 float4s each (32 floats:
// registers to spare), a warp for rows up to 1024, a block of up to 512 threads up to 16384;
// wider rows go to Welford in two passes.
void launch_normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const bool vec4 = cols % 4 == 0 && aligned(x) && aligned(y);
  if (cols <= 128) return launch_in_registers<32, 1>(x, y, rows, cols, eps, vec4);
  if (cols <= 256) return launch_in_registers<32, 2>(x, y, rows, cols, eps, vec4);
  if (cols <= 512) return launch_in_registers<32, 4>(x, y, rows, cols, eps, vec4);
  if (cols <= 1024) return launch_in_registers<32, 8>(x, y, rows, cols, eps, vec4);
  if (cols <= 2048) return launch_in_registers<64, 8>(x, y, rows, cols, eps, vec4);
  if (cols <= 4096) return launch_in_registers<128, 8>(x, y, rows, cols, eps, vec4);
  if (cols <= 8192) return launch_in_registers<256, 8>(x, y, rows, cols, eps, vec4);
  if (cols <= 16384) return launch_in_registers<512, 8>(x, y, rows, cols, eps, vec4);
  launch_welford(x, y, rows, cols, eps);
}

}  // namespace
}  // namespace lab06::kernels
