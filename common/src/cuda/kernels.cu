// The harness's own kernels. Each is the simplest code that reaches its roof: the ceilings are
// what a careful kernel can do on this GPU, so the labs' kernels are measured against them.
#include "kernels.hpp"

#include <workbook/cuda/check.hpp>

// The timer's run markers: empty kernels with C names, so that CUPTI's records name them exactly
// (see kernel_runner in timer.cpp). Outside any namespace on purpose.
extern "C" __global__ void workbook_cupti_begin_run() {}
extern "C" __global__ void workbook_cupti_end_run() {}

namespace workbook::cuda::detail {
namespace {

// Elements [0, n4 * 4) as float4; the caller handles the rest.
__global__ void read_all_kernel(const float4* __restrict__ x, std::size_t n4, float* sink) {
  float sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n4;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 v = x[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (sum == 12345.678f) sink[0] = sum;  // practically never: the loads stay, nothing is written
}

__global__ void spin_kernel(std::uint64_t nanoseconds) {
  std::uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

// Each block copies 2 x kThreads float4s, both loads issued before the first store; the grid
// covers the array, so the block scheduler keeps every SM busy to the end. The scalar tail is done
// by a second, tiny kernel.
__global__ void copy_kernel(const float4* __restrict__ x, float4* __restrict__ y, std::size_t n4) {
  const std::size_t i = blockIdx.x * std::size_t{2 * kThreads} + threadIdx.x, j = i + kThreads;
  const float4 a = i < n4 ? x[i] : float4{}, b = j < n4 ? x[j] : float4{};
  if (i < n4) y[i] = a;
  if (j < n4) y[j] = b;
}

__global__ void copy_tail_kernel(const float* x, float* y, std::size_t from, std::size_t n) {
  for (std::size_t i = from + threadIdx.x; i < n; i += blockDim.x) y[i] = x[i];
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b,
                             const float4* __restrict__ c, float s, std::size_t n4) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n4;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 u = b[i], v = c[i];
    a[i] = make_float4(u.x + s * v.x, u.y + s * v.y, u.z + s * v.z, u.w + s * v.w);
  }
}

// 8 chains: each FMA waits ~4 cycles for its predecessor, so a warp needs several independent
// ones, and each SM several warps, to start one per cycle on every lane.
__global__ void fma_kernel(float* sink, int rounds, float b, float c) {
  float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5,
        a6 = a0 + 6, a7 = a0 + 7;
  for (int r = 0; r < rounds; ++r) {
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      a0 = fmaf(a0, b, c);
      a1 = fmaf(a1, b, c);
      a2 = fmaf(a2, b, c);
      a3 = fmaf(a3, b, c);
      a4 = fmaf(a4, b, c);
      a5 = fmaf(a5, b, c);
      a6 = fmaf(a6, b, c);
      a7 = fmaf(a7, b, c);
    }
  }
  const float sum = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
  if (sum == 12345.678f) sink[0] = sum;
}

}  // namespace

void mark_run(bool begin, cudaStream_t stream) {
  if (begin)
    workbook_cupti_begin_run<<<1, 1, 0, stream>>>();
  else
    workbook_cupti_end_run<<<1, 1, 0, stream>>>();
}

void read_all(const float* buffer, std::size_t n, float* sink, int blocks, cudaStream_t stream) {
  read_all_kernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(buffer), n / 4,
                                                   sink);
  WORKBOOK_CUDA_CHECK_LAUNCH(read_all_kernel);
}

void spin(std::uint64_t nanoseconds, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(nanoseconds);
  WORKBOOK_CUDA_CHECK_LAUNCH(spin_kernel);
}

void copy(const float* x, float* y, std::size_t n, cudaStream_t stream) {
  if (n / 4 > 0) {
    const auto blocks = static_cast<unsigned>((n / 4 + 2 * kThreads - 1) / (2 * kThreads));
    copy_kernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(x),
                                                 reinterpret_cast<float4*>(y), n / 4);
    WORKBOOK_CUDA_CHECK_LAUNCH(copy_kernel);
  }
  if (n % 4 != 0) {
    copy_tail_kernel<<<1, 32, 0, stream>>>(x, y, n / 4 * 4, n);
    WORKBOOK_CUDA_CHECK_LAUNCH(copy_tail_kernel);
  }
}

void triad(float* a, const float* b, const float* c, float s, std::size_t n, int blocks,
           cudaStream_t stream) {
  triad_kernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<float4*>(a),
                                                reinterpret_cast<const float4*>(b),
                                                reinterpret_cast<const float4*>(c), s, n / 4);
  WORKBOOK_CUDA_CHECK_LAUNCH(triad_kernel);
}

void fma_chains(float* sink, int rounds, int blocks, cudaStream_t stream) {
  fma_kernel<<<blocks, kThreads, 0, stream>>>(sink, rounds, 0.9999999f, 1e-7f);
  WORKBOOK_CUDA_CHECK_LAUNCH(fma_kernel);
}

}  // namespace workbook::cuda::detail
