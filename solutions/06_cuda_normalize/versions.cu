// Lab 06's numbered versions of normalize. v5 is the reference (normalize.cu launches the same).
#include "versions.hpp"

#include "normalize_kernels.cuh"
#include "reduce.cuh"

#include <workbook/cuda/check.hpp>

namespace lab06::versions {
namespace {

constexpr int kThreads = 256;

// --- v1: eager PyTorch's three kernels ---------------------------------------------------------

// A shared-memory tree: half the threads add the other half's values, a barrier, and again.
__device__ float tree_sum(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();  // before anyone writes `shared` again
  return total;
}

__global__ void row_mean(const float* x, float* mean, std::size_t cols) {
  __shared__ float shared[kThreads];
  const float* xr = x + blockIdx.x * cols;
  float s = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
  s = tree_sum(s, shared);
  if (threadIdx.x == 0) mean[blockIdx.x] = s / float(cols);
}

__global__ void row_inv_std(const float* x, const float* mean, float* inv_std, std::size_t cols,
                            float eps) {
  __shared__ float shared[kThreads];
  const float* xr = x + blockIdx.x * cols;
  const float m = mean[blockIdx.x];
  float s = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += blockDim.x) s += (xr[c] - m) * (xr[c] - m);
  s = tree_sum(s, shared);
  if (threadIdx.x == 0) inv_std[blockIdx.x] = rsqrtf(s / float(cols) + eps);
}

__global__ void apply(const float* x, const float* mean, const float* inv_std, float* y,
                      std::size_t n, std::size_t cols) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    y[i] = (x[i] - mean[i / cols]) * inv_std[i / cols];
}

// --- v2, v3: fused, one block per row, three passes over the row -------------------------------

template <bool kShuffles>
__global__ void fused_rows(const float* x, float* y, std::size_t cols, float eps) {
  __shared__ float shared[kThreads];
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  auto sum = [&](float v) {
    return kShuffles ? kernels::block_sum<kThreads>(v, shared) : tree_sum(v, shared);
  };
  float s = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) s += xr[c];
  const float mean = sum(s) / float(cols);
  s = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) s += (xr[c] - mean) * (xr[c] - mean);
  const float inv_std = rsqrtf(sum(s) / float(cols) + eps);
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = (xr[c] - mean) * inv_std;
}

// --- The sum-of-squares formula, for the record --------------------------------------------------

__global__ void sum_of_squares_rows(const float* x, float* y, std::size_t cols, float eps) {
  __shared__ float shared[kThreads];
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  float s = 0, s2 = 0;
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) {
    s += xr[c];
    s2 += xr[c] * xr[c];
  }
  const float mean = kernels::block_sum<kThreads>(s, shared) / float(cols);
  // E[x^2] - mean^2: cancels when the mean is large (section 2 of the handout).
  const float var = kernels::block_sum<kThreads>(s2, shared) / float(cols) - mean * mean;
  const float inv_std = rsqrtf(var + eps);
  for (std::size_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = (xr[c] - mean) * inv_std;
}

}  // namespace

void normalize_v1_three_kernels(const float* x, float* y, std::size_t rows, std::size_t cols,
                                float eps) {
  // The row statistics live in device memory between the kernels, as PyTorch's tensors do;
  // stream-ordered allocations cost no synchronisation.
  float* stats = nullptr;
  WORKBOOK_CUDA_CHECK(
      cudaMallocAsync(reinterpret_cast<void**>(&stats), 2 * rows * sizeof(float), nullptr));
  const unsigned blocks = static_cast<unsigned>(rows);
  row_mean<<<blocks, kThreads>>>(x, stats, cols);
  WORKBOOK_CUDA_CHECK_LAUNCH(row_mean);
  row_inv_std<<<blocks, kThreads>>>(x, stats, stats + rows, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(row_inv_std);
  const std::size_t n = rows * cols;
  apply<<<static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, 1u << 20)),
          kThreads>>>(x, stats, stats + rows, y, n, cols);
  WORKBOOK_CUDA_CHECK_LAUNCH(apply);
  WORKBOOK_CUDA_CHECK(cudaFreeAsync(stats, nullptr));
}

void normalize_v2_fused_shared(const float* x, float* y, std::size_t rows, std::size_t cols,
                               float eps) {
  fused_rows<false><<<static_cast<unsigned>(rows), kThreads>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(fused_rows);
}

void normalize_v3_warp_shuffles(const float* x, float* y, std::size_t rows, std::size_t cols,
                                float eps) {
  fused_rows<true><<<static_cast<unsigned>(rows), kThreads>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(fused_rows);
}

void normalize_v4_welford(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  kernels::launch_welford(x, y, rows, cols, eps);
}

void normalize_sum_of_squares(const float* x, float* y, std::size_t rows, std::size_t cols,
                              float eps) {
  sum_of_squares_rows<<<static_cast<unsigned>(rows), kThreads>>>(x, y, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(sum_of_squares_rows);
}

void normalize_v5_registers(const float* x, float* y, std::size_t rows, std::size_t cols,
                            float eps) {
  kernels::launch_normalize(x, y, rows, cols, eps);
}

}  // namespace lab06::versions
