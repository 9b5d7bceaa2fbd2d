// Self-test submission for a GPU machine (no expected.json, so CI, which has no GPU, leaves it out;
// grade it with --expect expected.gpu.json): square is right, and slow (a grid-stride loop of 8
// blocks of 128 threads), but on the perf cases' inputs (at least 1 Mi floats) it works on a stream
// of its own, which it does not wait for: each call first waits for the previous call's kernel and
// then returns as soon as its own is launched, so its work runs outside the window the harness
// times on the GPU. The perf driver's own clock of each batch (the harness waits for the whole
// device at its end) still sees the work: the time the worker reported is not believed, and the
// function is judged, and flagged, by the driver's clock. square_2d and time_launches are the
// stub's.
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
  if (n < (std::size_t{1} << 20)) {
    square_kernel<<<8, 128>>>(x, y, n);
    WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
    return;
  }
  static cudaStream_t own = [] {
    cudaStream_t s = nullptr;
    WORKBOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }();
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(own));  // the previous call's work, finished now
  square_kernel<<<8, 128, 0, own>>>(x, y, n);
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
