// Mistake: the float4 kernel, then step 1's one-float kernel over the whole array "for the rest":
// out of place it rewrites the same values, in place it squares the float4 part a second time.
// Checked by: Square.InPlace
// Expect: your output matches the float4 part squared twice
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace {

__global__ void square4_kernel(const float4* x, float4* y, std::size_t n4) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n4) {
    const float4 v = x[i];
    y[i] = make_float4(v.x * v.x, v.y * v.y, v.z * v.z, v.w * v.w);
  }
}

__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  const bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(y) % 16 == 0;
  if (aligned && n >= 4) {
    const std::size_t n4 = n / 4;
    square4_kernel<<<static_cast<unsigned>((n4 + 255) / 256), 256>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), n4);
    WORKBOOK_CUDA_CHECK_LAUNCH(square4_kernel);
  }
  // The one-float kernel finishes what the float4 kernel left (and, misaligned, does it all).
  square_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
