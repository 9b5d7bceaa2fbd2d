// Mistake: a block of 192 threads reduced by a halving tree in shared memory (192, 96, 48, 24, 12,
// 6, 3, 1): at the step from 3 to 1 the third partial is dropped, and with it a third of the row.
// Checked by: Normalize.EveryRowWidth
// Expect: threads 2, 5, 8, ..., 191 (every 3rd) of each block of 192 never reaching the total
// Expect: a halving tree over 192 threads (192, 96, 48, 24, 12, 6, 3, 1)
#include "one_block_per_row.cuh"

namespace {

constexpr int kThreads = 192;

struct TreeSum {
  __device__ static float block_sum(float v) {
    __shared__ float s[kThreads];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
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
  scaffold::normalize_with<kThreads, TreeSum>(x, y, rows, cols, eps);
}
