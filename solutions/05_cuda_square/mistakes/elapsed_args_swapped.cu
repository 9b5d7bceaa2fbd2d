// Mistake: time_launches calls cudaEventElapsedTime(&ms, stop, start): every run measures minus
// its length.
// Checked by: TimeLaunches.MeasuresWorkOfKnownLength
// Expect: The length is right but its sign is not
// Expect: the events are swapped
// Lab 05. square: float4 when x and y both sit on 16-byte boundaries, else one float per thread.
// square_2d: one block per row. time_launches: a start and a stop event per run.
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace lab05 {
namespace {

// One float4 per thread; the threads past the last float4 take the n % 4 floats left over.
__global__ void square4_kernel(const float4* x4, float4* y4, std::size_t n4, const float* x,
                               float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n4) {
    const float4 v = x4[i];
    y4[i] = make_float4(v.x * v.x, v.y * v.y, v.z * v.z, v.w * v.w);
  } else {
    const std::size_t j = 4 * n4 + (i - n4);
    if (j < n) y[j] = x[j] * x[j];
  }
}

__global__ void square1_kernel(const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}

__global__ void square_rows_kernel(const float* x, std::size_t ld_x, float* y, std::size_t ld_y,
                                   std::size_t rows, std::size_t cols) {
  for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x)
    for (std::size_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float v = x[r * ld_x + c];
      y[r * ld_y + c] = v * v;
    }
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  constexpr unsigned threads = 256;
  if (aligned16(x) && aligned16(y)) {
    const std::size_t n4 = n / 4;
    const std::size_t items = n4 + n % 4;  // one thread per float4, plus the tail
    const unsigned blocks = static_cast<unsigned>((items + threads - 1) / threads);
    square4_kernel<<<blocks, threads>>>(reinterpret_cast<const float4*>(x),
                                        reinterpret_cast<float4*>(y), n4, x, y, n);
    WORKBOOK_CUDA_CHECK_LAUNCH(square4_kernel);
  } else {
    const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
    square1_kernel<<<blocks, threads>>>(x, y, n);
    WORKBOOK_CUDA_CHECK_LAUNCH(square1_kernel);
  }
}

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  if (rows == 0 || cols == 0) return;
  if (ld_x == cols && ld_y == cols) return square(x, y, rows * cols);
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(rows, 8192));
  square_rows_kernel<<<blocks, 256>>>(x, ld_x, y, ld_y, rows, cols);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_rows_kernel);
}

std::vector<float> time_launches(const std::function<void()>& launch, int warmup, int runs) {
  check_time_launches_arguments(launch, warmup, runs);
  for (int i = 0; i < warmup; ++i) launch();  // not timed: the first launches are slow

  std::vector<cudaEvent_t> start(runs), stop(runs);
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventCreate(&start[i]));
    WORKBOOK_CUDA_CHECK(cudaEventCreate(&stop[i]));
  }
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventRecord(start[i], 0));
    launch();
    WORKBOOK_CUDA_CHECK(cudaEventRecord(stop[i], 0));
  }
  WORKBOOK_CUDA_CHECK(cudaEventSynchronize(stop[runs - 1]));

  std::vector<float> ms(runs);
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&ms[i], stop[i], start[i]));
    WORKBOOK_CUDA_CHECK(cudaEventDestroy(start[i]));
    WORKBOOK_CUDA_CHECK(cudaEventDestroy(stop[i]));
  }
  return ms;
}

}  // namespace lab05
