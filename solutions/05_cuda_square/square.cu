// Lab 05 reference solution: square with 16-byte loads and stores over a grid that covers the
// array, square_2d with the same kernel row by row, and time_launches with CUDA events.
//
// Why this shape: squaring does one multiply per 8 bytes moved, so the kernel is memory bound and
// only has to keep device memory busy. That takes (1) coalescing: the 32 threads of a warp touch
// 32 neighbouring 16-byte words, 512 contiguous bytes; (2) bytes in flight: each thread issues its
// loads before it stores anything, and the SMs hold thousands of threads, so that tens of KB per
// SM are on their way at any moment (latency ~ 0.6 us x 3 TB/s / 132 SMs is about 14 KB); (3) no
// waste: one launch, and the few floats before the first and after the last float4 done by the
// same kernel. A grid that covers the array (each block a slice, then gone) beat a one-wave
// grid-stride loop by 3% on the H100: the block scheduler keeps every SM busy to the very end.
#include "square.hpp"

#include "square_kernels.cuh"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace lab05 {

// From this many floats on (32 MiB), the array takes four waves of blocks or more (a wave of the
// default blocks, 2 float4s x 256 threads on each of the H100's 132 SMs x 8 blocks, is about 2 Mi
// floats), and lighter threads, one float4 each, finish it sooner. On the H100, 2026-11-24, the
// median of 6 alternating rounds of triton's do_bench: 10000 x 10000, 269.6 us against 276.2 for
// 2 float4s (torch.square: 270.1); 4096 x 4096, 50.4 against 51.5 (torch: 50.5). Blocks of 64 to
// 256 threads were alike; 512 was 1-2 us slower there, though it had been the fastest the day
// before (267.7 against 270.2 us at 10000 x 10000). Below, up to four waves, 2 float4s per thread
// in blocks of 256 measured as fast or faster (1823 x 781, one wave: 8.9 against 9.5 us on
// 2026-11-23, 9.3 against 9.4 on 2026-11-24).
constexpr std::size_t kManyWaves = std::size_t{1} << 23;

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  if (n >= kManyWaves) return kernels::launch_square_rows<1, 256>(x, n, y, n, 1, n);
  kernels::launch_square_rows(x, n, y, n, 1, n);  // one row of n floats
}

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  if (rows == 0 || cols == 0) return;
  if (ld_x == cols && ld_y == cols) return square(x, y, rows * cols);  // contiguous: one long row
  kernels::launch_square_rows(x, ld_x, y, ld_y, rows, cols);
}

std::vector<float> time_launches(const std::function<void()>& launch, int warmup, int runs) {
  check_time_launches_arguments(launch, warmup, runs);
  // Warm-up: the first launch loads the module and meets cold clocks and caches.
  for (int i = 0; i < warmup; ++i) launch();
  // One pair of events per run, all enqueued before waiting once: the GPU timestamps each run's
  // start and end itself, so the host's own pauses between launches are not counted.
  std::vector<cudaEvent_t> events(2 * static_cast<std::size_t>(runs));
  for (cudaEvent_t& e : events) WORKBOOK_CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < runs; ++i) {
    WORKBOOK_CUDA_CHECK(cudaEventRecord(events[2 * i]));
    launch();
    WORKBOOK_CUDA_CHECK(cudaEventRecord(events[2 * i + 1]));
  }
  WORKBOOK_CUDA_CHECK(cudaEventSynchronize(events.back()));
  std::vector<float> ms(static_cast<std::size_t>(runs));
  for (int i = 0; i < runs; ++i)
    WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]));
  for (cudaEvent_t e : events) WORKBOOK_CUDA_CHECK(cudaEventDestroy(e));
  return ms;
}

}  // namespace lab05
