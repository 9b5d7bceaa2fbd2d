// Mistake: the float4 path taken when x is 16-byte aligned, without checking y: with y shifted
// past a boundary, the float4 stores are misaligned.
// Checked by: Square.MisalignedStarts
// Expect: made an invalid 16-byte write of global memory
// Expect: square's x and y may start at any float
#include "square.hpp"

#include <workbook/cuda/check.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace {

__global__ void square_kernel(const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0;  // y's is not checked
  if (aligned && 4 * i + 3 < n) {
    const float4 v = reinterpret_cast<const float4*>(x)[i];
    reinterpret_cast<float4*>(y)[i] = make_float4(v.x * v.x, v.y * v.y, v.z * v.z, v.w * v.w);
  } else {
    for (std::size_t k = aligned ? 4 * i : i; k < n && k < (aligned ? 4 * i + 4 : i + 1); ++k)
      y[k] = x[k] * x[k];
  }
}

}  // namespace

namespace lab05 {

void square(const float* x, float* y, std::size_t n) {
  check_square_arguments(x, y, n);
  if (n == 0) return;
  const bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
  const std::size_t threads = aligned ? (n + 3) / 4 : n;
  square_kernel<<<static_cast<unsigned>((threads + 255) / 256), 256>>>(x, y, n);
  WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);
}

}  // namespace lab05
