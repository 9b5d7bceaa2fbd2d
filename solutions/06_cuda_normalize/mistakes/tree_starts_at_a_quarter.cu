// Mistake: the shared-memory tree of a 256-thread block starts at half = 64 (blockDim.x / 4), so
// the partial sums of threads 128-255 never enter it.
// Checked by: Normalize.EveryRowWidth
// Expect: the partial sums of threads 128-255 of each block of 256 never reaching the total
// Expect: the reduction leaves those warps' partial sums out
#include "one_block_per_row.cuh"

namespace {

constexpr int kThreads = 256;

struct ShortTreeSum {
  __device__ static float block_sum(float v) {
    __shared__ float s[kThreads];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int half = kThreads / 4; half > 0; half /= 2) {
      if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
      __syncthreads();
    }
    const float total = s[0];
    __syncthreads();
    return total;
  }
};

}  // namespace

void lab06::normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  scaffold::normalize_with<kThreads, ShortTreeSum>(x, y, rows, cols, eps);
}
