// Mistake: the warp's shuffle sum starts at offset 32, past the warp: thread ^ 32 is no thread of
// it, so __shfl_xor_sync returns each thread's own value and every sum starts doubled.
// Checked by: Normalize.EveryRowWidth
// Expect: every sum counted twice (your mean is exactly 2x the row's
#include "one_block_per_row.cuh"

namespace {

constexpr int kThreads = 256;

struct DoubledSum {
  __device__ static float block_sum(float v) {
    __shared__ float partial[kThreads / 32];
    for (int offset = 32; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    float total = 0;
    for (int w = 0; w < kThreads / 32; ++w) total += partial[w];
    __syncthreads();
    return total;
  }
};

}  // namespace

void lab06::normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  scaffold::normalize_with<kThreads, DoubledSum>(x, y, rows, cols, eps);
}
