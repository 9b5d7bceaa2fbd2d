// Mistake: the host returns before launching when there is no whole float4 (a launch of 0 blocks
// is an error), though the kernel's head and tail code would handle those elements: arrays of
// fewer than one float4 are never written.
// Checked by: Square.MisalignedStarts
// Expect: the output was never written
// Expect: Was the kernel launched
// Lab 05: square with float4 loads and stores (a grid-stride loop, one wave of blocks),
// square_2d row by row, and time_launches with one pair of events per run.
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace lab05 {
namespace {

constexpr int kThreads = 256;

// Float4s from x + head on; block 0 also squares the `head` floats before the first 16-byte
// boundary and the (at most 3) floats after the last whole float4.
__global__ void square_vec4(const float* x, float* y, std::size_t n, std::size_t head,
                            std::size_t n4) {
  const float4* x4 = reinterpret_cast<const float4*>(x + head);
  float4* y4 = reinterpret_cast<float4*>(y + head);
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n4; i += stride) {
    float4 v = x4[i];
    v.x *= v.x;
    v.y *= v.y;
    v.z *= v.z;
    v.w *= v.w;
    y4[i] = v;
  }
  if (blockIdx.x == 0 && threadIdx.x < 4) {
    if (threadIdx.x < head) y[threadIdx.x] = x[threadIdx.x] * x[threadIdx.x];
    const std::size_t j = head + 4 * n4 + threadIdx.x;
    if (j < n) y[j] = x[j] * x[j];
  }
}

// x and y not equally aligned: plain floats, still coalesced.
__global__ void square_scalar(const float* x, float* y, std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    y[i] = x[i] * x[i];
}

__global__ void square_rows(const float* x, std::size_t ld_x, float* y, std::size_t ld_y,
                            std::size_t rows, std::size_t cols) {
  for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const float* xr = x + r * ld_x;
    float* yr = y + r * ld_y;
    for (std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; c < cols;
         c += std::size_t{gridDim.x} * blockDim.x)
      yr[c] = xr[c] * xr[c];
  }
}

// One wave: as many blocks as fit on all the SMs at once.
std::size_t one_wave() {
  static std::size_t blocks = 0;
  if (blocks == 0) {
    int device = 0, sms = 0, per_sm = 0;
    WORKBOOK_CUDA_CHECK(cudaGetDevice(&device));
    WORKBOOK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    WORKBOOK_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, square_vec4, kThreads, 0));
    blocks = static_cast<std::size_t>(sms) * static_cast<std::size_t>(per_sm);
  }
  return blocks;
}

std::uintptr_t misalignment(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16;
}

}  // namespace

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  if (misalignment(x) == misalignment(y)) {
    // floats to do one by one before x reaches a 16-byte boundary
    const std::size_t head = std::min<std::size_t>((16 - misalignment(x)) % 16 / 4, n);
    const std::size_t n4 = (n - head) / 4;
    const std::size_t blocks = std::min((n4 + kThreads - 1) / kThreads, one_wave());
    if (blocks == 0) return;  // a launch of 0 blocks is an error
    square_vec4<<<static_cast<unsigned>(blocks), kThreads>>>(x, y, n, head, n4);
    WORKBOOK_CUDA_CHECK_LAUNCH(square_vec4);
  } else {
    const std::size_t blocks = std::min((n + kThreads - 1) / kThreads, one_wave());
    square_scalar<<<static_cast<unsigned>(blocks), kThreads>>>(x, y, n);
    WORKBOOK_CUDA_CHECK_LAUNCH(square_scalar);
  }
}

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  if (rows == 0 || cols == 0) return;
  if (ld_x == cols && ld_y == cols) return square(x, y, rows * cols);
  const unsigned grid_x =
      static_cast<unsigned>(std::min<std::size_t>((cols + kThreads - 1) / kThreads, 64));
  const unsigned grid_y = static_cast<unsigned>(std::min<std::size_t>(rows, 65535));
  square_rows<<<dim3(grid_x, grid_y), kThreads>>>(x, ld_x, y, ld_y, rows, cols);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_rows);
}

std::vector<float> time_launches(const std::function<void()>& launch, int warmup, int runs) {
  check_time_launches_arguments(launch, warmup, runs);
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<cudaEvent_t> start(runs), stop(runs);
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventCreate(&start[i]));
    WORKBOOK_CUDA_CHECK(cudaEventCreate(&stop[i]));
  }
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventRecord(start[i]));
    launch();
    WORKBOOK_CUDA_CHECK(cudaEventRecord(stop[i]));
  }
  WORKBOOK_CUDA_CHECK(cudaEventSynchronize(stop[runs - 1]));
  std::vector<float> ms(runs);
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&ms[i], start[i], stop[i]));
    WORKBOOK_CUDA_CHECK(cudaEventDestroy(start[i]));
    WORKBOOK_CUDA_CHECK(cudaEventDestroy(stop[i]));
  }
  return ms;
}

}  // namespace lab05
