// Self-test submission: every function keeps its argument checks and returns zeros. Some visible
// tests pass (an empty dot product is 0), but the hidden tests guard them: nothing is credited.
#include "vector_ops.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include <algorithm>

namespace lab01 {

// One SIMD register of floats, for the instruction set this build targets (-march=native):
// Batch::size is 16 with AVX-512, 8 with AVX2, 4 with SSE or NEON. Use Batch::size, never a
// hard-coded 8: the same code must be right on every machine.
using Batch = xsimd::batch<float>;

void relu(std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("relu", x, "x", y, "y");
  std::fill(y.begin(), y.end(), 0.0f);
}

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("add", a, "a", out, "out");
  workbook::require_elementwise("add", b, "b", out, "out");
  std::fill(out.begin(), out.end(), 0.0f);
}

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("multiply", a, "a", out, "out");
  workbook::require_elementwise("multiply", b, "b", out, "out");
  std::fill(out.begin(), out.end(), 0.0f);
}

void squared_difference(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("squared_difference", a, "a", out, "out");
  workbook::require_elementwise("squared_difference", b, "b", out, "out");
  std::fill(out.begin(), out.end(), 0.0f);
}

float dot(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("dot", a.size(), "a", b.size(), "b");
  return 0.0f;
}

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("euclidean_distance", a.size(), "a", b.size(), "b");
  return 0.0f;
}

}  // namespace lab01
