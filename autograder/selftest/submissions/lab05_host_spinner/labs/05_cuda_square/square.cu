// Self-test submission for a GPU machine (no expected.json, so CI, which has no GPU, leaves it out;
// grade it with --expect expected.gpu.json): square is right and fast, but on the perf cases'
// inputs (at least 1 Mi floats) its first call leaves two host threads spinning for ever, which,
// with the reference timed on the same machine in turn, would take the cores its worker needs.
// The perf driver freezes the student's whole process while the reference is timed, and counts
// the CPU time of all its threads while it is timed: more cores busy than the case's one thread,
// flagged, and judged by that work. square_2d and time_launches are the
// stub's.
#include "square.hpp"

#include <workbook/cuda/check.hpp>
#include <workbook/not_implemented.hpp>

#include <cuda_runtime.h>

#include <thread>

namespace lab05 {

namespace {

__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    y[i] = x[i] * x[i];
}

}  // namespace

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  static bool spinning = false;
  if (n >= (std::size_t{1} << 20) && !spinning) {
    spinning = true;
    for (int i = 0; i < 2; ++i)
      std::thread([] {
        for (;;) asm volatile("" ::: "memory");
      }).detach();
  }
  square_kernel<<<1024, 256>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols) {
  check_square_2d_arguments(x, ld_x, y, ld_y, rows, cols);
  throw workbook::NotImplemented("square_2d");
}

std::vector<float> time_launches(const std::function<void()>& launch, int warmup, int runs) {
  check_time_launches_arguments(launch, warmup, runs);
  throw workbook::NotImplemented("time_launches");
}

}  // namespace lab05
