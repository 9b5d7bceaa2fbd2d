// Mistake: square_2d's strided path launches blocks of 32 x 64 = 2048 threads, over the limit of
// 1024 threads per block: the launch fails.
// Checked by: Square2d.StridedRowsLeaveThePaddingAlone
// Expect: the launch was a grid of 1 block of 32 x 64 threads
// Expect: 2048 threads per block, over this GPU's limit of 1024
// Lab 05 Part A and B. square: a grid-stride loop over one wave of blocks.
// square_2d: 2-D tiles, contiguous matrices go to square.
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <algorithm>

namespace lab05 {
namespace {

constexpr int kBlock = 256;

__global__ void square_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  const std::size_t step = std::size_t{blockDim.x} * gridDim.x;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += step) {
    const float v = x[i];
    y[i] = v * v;
  }
}

__global__ void square_tile(const float* __restrict__ x, std::size_t ld_x, float* __restrict__ y,
                            std::size_t ld_y, std::size_t rows, std::size_t cols) {
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= cols) return;
  for (std::size_t r = blockIdx.y * std::size_t{blockDim.y} + threadIdx.y; r < rows;
       r += std::size_t{gridDim.y} * blockDim.y) {
    const float v = x[r * ld_x + c];
    y[r * ld_y + c] = v * v;
  }
}

int wave_blocks() {
  static int blocks = 0;
  if (blocks == 0) {
    int dev = 0, sm_count = 0, per_sm = 0;
    WORKBOOK_CUDA_CHECK(cudaGetDevice(&dev));
    WORKBOOK_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, dev));
    WORKBOOK_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, square_kernel, kBlock, 0));
    blocks = sm_count * per_sm;
  }
  return blocks;
}

}  // namespace

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  const std::size_t needed = (n + kBlock - 1) / kBlock;
  const int blocks = static_cast<int>(std::min<std::size_t>(needed, wave_blocks()));
  square_kernel<<<blocks, kBlock>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  if (rows == 0 || cols == 0) return;
  if (ld_x == cols && ld_y == cols) {
    square(x, y, rows * cols);  // contiguous: one long array
    return;
  }
  // a tile one warp wide and 64 rows tall; the rows loop past 65535 tiles
  const dim3 tile(32, 64);
  const unsigned tiles_x = static_cast<unsigned>((cols + tile.x - 1) / tile.x);
  const unsigned tiles_y =
      static_cast<unsigned>(std::min<std::size_t>((rows + tile.y - 1) / tile.y, 65535));
  square_tile<<<dim3(tiles_x, tiles_y), tile>>>(x, ld_x, y, ld_y, rows, cols);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_tile);
}

std::vector<float> time_launches(const std::function<void()>& launch, int warmup, int runs) {
  check_time_launches_arguments(launch, warmup, runs);
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<cudaEvent_t> begin(runs), end(runs);
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventCreate(&begin[i]));
    WORKBOOK_CUDA_CHECK(cudaEventCreate(&end[i]));
    WORKBOOK_CUDA_CHECK(cudaEventRecord(begin[i]));
    launch();
    WORKBOOK_CUDA_CHECK(cudaEventRecord(end[i]));
  }
  WORKBOOK_CUDA_CHECK(cudaEventSynchronize(end.back()));
  std::vector<float> ms(runs);
  for (int i = 0; i < runs; ++i)
    WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&ms[i], begin[i], end[i]));
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventDestroy(begin[i]));
    WORKBOOK_CUDA_CHECK(cudaEventDestroy(end[i]));
  }
  return ms;
}

}  // namespace lab05
