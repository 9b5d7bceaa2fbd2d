// Lab 05's numbered versions of square. v5 is the reference (square.cu launches the same kernel).
#include "versions.hpp"

#include "square_kernels.cuh"

#include <workbook/cuda/check.hpp>

#include <thrust/execution_policy.h>
#include <thrust/transform.h>

#include <stdexcept>
#include <string>

namespace lab05::versions {
namespace {

// The seed's kernel, as in the CUDA MODE lecture notes: a 2-D grid of 16 x 16 blocks. A warp is
// two half-rows of 16 threads, so each of its loads touches two separate 64-byte pieces of memory.
__global__ void square_matrix_kernel(const float* matrix, float* result, int width, int height) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < height && col < width) {
    const int i = row * width + col;
    result[i] = matrix[i] * matrix[i];
  }
}

__global__ void square_one_per_thread(const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}

__global__ void square_grid_stride(const float* __restrict__ x, float* __restrict__ y,
                                   std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    y[i] = x[i] * x[i];
}

// float4 grid-stride: kInFlight loads per thread per iteration, then the stores; the first
// threads of block 0 do the <= 3 floats before the first 16-byte boundary and after the last
// float4.
template <int kInFlight>
__global__ void square_float4_grid_stride(const float* __restrict__ x, float* __restrict__ y,
                                          std::size_t n, unsigned head) {
  const std::size_t n4 = (n - head) / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x + head);
  float4* y4 = reinterpret_cast<float4*>(y + head);
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  for (; i + (kInFlight - 1) * stride < n4; i += kInFlight * stride) {
    float4 v[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) v[k] = x4[i + k * stride];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) y4[i + k * stride] = kernels::square4(v[k]);
  }
  for (; i < n4; i += stride) y4[i] = kernels::square4(x4[i]);
  if (blockIdx.x == 0 && threadIdx.x < 8) {
    const std::size_t tail = head + 4 * n4;
    const std::size_t j = threadIdx.x < 4 ? threadIdx.x : tail + (threadIdx.x - 4);
    if ((threadIdx.x < 4 && j < head) || (threadIdx.x >= 4 && j < n)) y[j] = x[j] * x[j];
  }
}

// Blocks of kThreads that fit on the GPU at once: one wave.
template <class Kernel>
int one_wave(Kernel kernel) {
  int device = 0, sms = 0, per_sm = 0;
  WORKBOOK_CUDA_CHECK(cudaGetDevice(&device));
  WORKBOOK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  WORKBOOK_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kernels::kThreads, 0));
  return sms * per_sm;
}

template <int kInFlight>
void float4_grid_stride(const float* x, float* y, std::size_t n) {
  const auto offset = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16; };
  if (offset(x) != offset(y)) return square_v3_grid_stride(x, y, n);  // no float4 fits both
  static const int wave = one_wave(square_float4_grid_stride<kInFlight>);
  const unsigned head = static_cast<unsigned>(std::min<std::size_t>((16 - offset(x)) % 16 / 4, n));
  square_float4_grid_stride<kInFlight><<<wave, kernels::kThreads>>>(x, y, n, head);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_float4_grid_stride);
}

}  // namespace

void square_v1_seed_16x16(const float* x, float* y, std::size_t rows, std::size_t cols) {
  const dim3 block(16, 16),
      grid(static_cast<unsigned>((cols + 15) / 16), static_cast<unsigned>((rows + 15) / 16));
  square_matrix_kernel<<<grid, block>>>(x, y, static_cast<int>(cols), static_cast<int>(rows));
  WORKBOOK_CUDA_CHECK_LAUNCH(square_matrix_kernel);
}

void square_v2_one_per_thread(const float* x, float* y, std::size_t n) {
  square_one_per_thread<<<static_cast<unsigned>((n + kernels::kThreads - 1) / kernels::kThreads),
                          kernels::kThreads>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_one_per_thread);
}

void square_v3_grid_stride(const float* x, float* y, std::size_t n) {
  static const int wave = one_wave(square_grid_stride);
  square_grid_stride<<<wave, kernels::kThreads>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_grid_stride);
}

void square_v4_float4_grid_stride(const float* x, float* y, std::size_t n, int in_flight) {
  switch (in_flight) {
    case 1:
      return float4_grid_stride<1>(x, y, n);
    case 2:
      return float4_grid_stride<2>(x, y, n);
    case 4:
      return float4_grid_stride<4>(x, y, n);
    case 8:
      return float4_grid_stride<8>(x, y, n);
  }
  throw std::invalid_argument("square_v4_float4_grid_stride: " + std::to_string(in_flight) +
                              " in flight is not compiled (1, 2, 4, 8)");
}

void square_v5_covering_grid(const float* x, float* y, std::size_t n, int per_thread, int block) {
  switch (per_thread * 1000 + block) {
    case 1128:
      return kernels::launch_square_rows<1, 128>(x, n, y, n, 1, n);
    case 2128:
      return kernels::launch_square_rows<2, 128>(x, n, y, n, 1, n);
    case 4128:
      return kernels::launch_square_rows<4, 128>(x, n, y, n, 1, n);
    case 1256:
      return kernels::launch_square_rows<1, 256>(x, n, y, n, 1, n);
    case 2256:
      return kernels::launch_square_rows<2, 256>(x, n, y, n, 1, n);
    case 4256:
      return kernels::launch_square_rows<4, 256>(x, n, y, n, 1, n);
    case 8256:
      return kernels::launch_square_rows<8, 256>(x, n, y, n, 1, n);
    case 1512:
      return kernels::launch_square_rows<1, 512>(x, n, y, n, 1, n);
    case 2512:
      return kernels::launch_square_rows<2, 512>(x, n, y, n, 1, n);
    case 1064:
      return kernels::launch_square_rows<1, 64>(x, n, y, n, 1, n);
    case 2064:
      return kernels::launch_square_rows<2, 64>(x, n, y, n, 1, n);
  }
  throw std::invalid_argument(
      "square_v5_covering_grid: " + std::to_string(per_thread) + " per thread in blocks of " +
      std::to_string(block) +
      " is not compiled (1, 2, 4 per thread in 128 or 256 threads; 8 in 256; 1 or 2 in 64 or 512)");
}

namespace {
struct Square {
  __device__ float operator()(float v) const { return v * v; }
};
}  // namespace

void square_thrust(const float* x, float* y, std::size_t n) {
  thrust::transform(thrust::cuda::par_nosync, x, x + n, y, Square{});
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lab05::versions
