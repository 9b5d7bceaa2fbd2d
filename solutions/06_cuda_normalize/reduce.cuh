#pragma once
// Reductions across the threads of a row, shared by the reference and the numbered versions.
// Everything has internal linkage: each .cu file compiles its own copy.
#include <cuda_runtime.h>

namespace lab06::kernels {
namespace {

constexpr unsigned kFullWarp = 0xffffffffu;

// The sum of v over the 32 lanes of a warp, in every lane: five butterfly exchanges through
// registers (__shfl_xor_sync), no shared memory and no barrier.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullWarp, v, offset);
  return v;
}

// The sum of v over the kThreads threads of a block, in every thread. Warps reduce by shuffles;
// then each warp's total goes through `partial` (kThreads / 32 floats of shared memory) and every
// warp adds them up. The second barrier lets the caller reuse `partial` for its next reduction.
template <int kThreads>
__device__ __forceinline__ float block_sum(float v, float* partial) {
  v = warp_sum(v);
  if constexpr (kThreads > 32) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = lane < kThreads / 32 ? partial[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();
  }
  return v;
}

// Welford's running statistics of some values: their count, mean, and sum of squared deviations
// from the mean (M2). Two of them combine exactly as if one had seen all the values (Chan et al.).
struct Welford {
  float count = 0, mean = 0, m2 = 0;

  __device__ __forceinline__ void add(float x) {
    count += 1;
    const float d = x - mean;
    mean += d / count;
    m2 += d * (x - mean);
  }
  __device__ __forceinline__ void merge(const Welford& o) {
    const float n = count + o.count;
    if (n == 0) return;
    const float d = o.mean - mean, share = o.count / n;
    mean += d * share;
    m2 += o.m2 + d * d * count * share;
    count = n;
  }
};

__device__ __forceinline__ Welford warp_welford(Welford w) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    Welford o;
    o.count = __shfl_xor_sync(kFullWarp, w.count, offset);
    o.mean = __shfl_xor_sync(kFullWarp, w.mean, offset);
    o.m2 = __shfl_xor_sync(kFullWarp, w.m2, offset);
    w.merge(o);
  }
  return w;
}

}  // namespace
}  // namespace lab06::kernels
