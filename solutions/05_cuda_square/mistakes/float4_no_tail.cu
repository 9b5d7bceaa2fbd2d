// Mistake: float4 loads and stores over the n / 4 whole float4s, and nothing for the last n % 4.
// Checked by: Square.HugeAndSpecialValues
// Expect: your output matches a float4 loop without its scalar tail
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

namespace {

__global__ void square_kernel(const float4* x, float4* y, std::size_t n4) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n4) {
    const float4 v = x[i];
    y[i] = make_float4(v.x * v.x, v.y * v.y, v.z * v.z, v.w * v.w);
  }
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  const std::size_t n4 = n / 4;
  if (n4 == 0) return;
  square_kernel<<<static_cast<unsigned>((n4 + 255) / 256), 256>>>(
      reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), n4);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
