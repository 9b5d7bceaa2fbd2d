// Mistake: the launch raised to 512 threads per row, the shared array of the tree left at 256
// floats: threads 256-511 write past it.
// Checked by: Normalize.EveryRowWidth
// Expect: made an invalid 4-byte write of shared memory
// Expect: a shared array indexed by threadIdx.x that holds 256 elements of 4 bytes,
// Expect: in blocks of 512 threads
#include "one_block_per_row.cuh"

namespace {

constexpr int kThreads = 512;

struct TreeSum {
  __device__ static float block_sum(float v) {
    __shared__ float s[256];
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
