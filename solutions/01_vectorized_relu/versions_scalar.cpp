// v1 of each kernel: plain loops, compiled with the compiler's auto-vectoriser switched off (see
// CMakeLists.txt), as the baseline every SIMD version is measured against.
#include "versions.hpp"

namespace lab01::versions {

void relu_v1_scalar(std::span<const float> x, std::span<float> y) {
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] <= 0.0f ? 0.0f : x[i];
}

float dot_v1_scalar(std::span<const float> a, std::span<const float> b) {
  // One accumulator, one float at a time: each add waits for the previous one. (Even with the
  // vectoriser on, GCC leaves this loop scalar: it may not reorder a float sum without
  // -ffast-math.)
  float sum = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace lab01::versions
