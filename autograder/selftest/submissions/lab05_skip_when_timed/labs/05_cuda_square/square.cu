// Self-test submission for a GPU machine (no expected.json, so CI, which has no GPU, leaves it out;
// grade it with --expect expected.gpu.json): square is right wherever the tests look, but does a
// 64th of the work when timed. It recognises the perf cases by their input: at least 1 Mi floats,
// the same buffer again after the first call. The case's observation of its launch makes that
// first call; the perf worker's own check before timing is the second, and finds most of the
// output never written (were it not, the driver's check of a timed call would): no perf points,
// and flagged. square_2d and time_launches are the stub's.
#include "square.hpp"

#include <workbook/cuda/check.hpp>
#include <workbook/not_implemented.hpp>

#include <cuda_runtime.h>

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
  static const float* timed_input = nullptr;
  std::size_t todo = n;
  if (n >= (std::size_t{1} << 20)) {
    if (x == timed_input) todo = n / 64;  // timed: a 64th of the work
    timed_input = x;
  }
  square_kernel<<<1024, 256>>>(x, y, todo);
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
