// Self-test submission: relu dereferences a null pointer; every other function is correct (plain
// loops). A crash fails the tests that call relu and nothing else.
#include "vector_ops.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab01 {

// One SIMD register of floats, for the instruction set this build targets (-march=native):
// Batch::size is 16 with AVX-512, 8 with AVX2, 4 with SSE or NEON. Use Batch::size, never a
// hard-coded 8: the same code must be right on every machine.
using Batch = xsimd::batch<float>;

void relu(std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("relu", x, "x", y, "y");
  volatile float* nowhere = nullptr;
  *nowhere = x.empty() ? 0.0f : x[0];
}

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("add", a, "a", out, "out");
  workbook::require_elementwise("add", b, "b", out, "out");
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
}

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("multiply", a, "a", out, "out");
  workbook::require_elementwise("multiply", b, "b", out, "out");
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] * b[i];
}

void squared_difference(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("squared_difference", a, "a", out, "out");
  workbook::require_elementwise("squared_difference", b, "b", out, "out");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float d = a[i] - b[i];
    out[i] = d * d;
  }
}

float dot(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("dot", a.size(), "a", b.size(), "b");
  float sum = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("euclidean_distance", a.size(), "a", b.size(), "b");
  float sum = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float d = a[i] - b[i];
    sum += d * d;
  }
  return std::sqrt(sum);
}

}  // namespace lab01
