// Self-test submission: a student who has not written euclidean_distance yet (and whose relu still
// forgets its tail). It compiles, but the tests do not link: the report shows the linker's line.
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
  for (std::size_t i = 0; i + 8 <= x.size(); i += 8)
    for (std::size_t k = i; k < i + 8; ++k) y[k] = x[k] <= 0.0f ? 0.0f : x[k];
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

// euclidean_distance: to do (declared in vector_ops.hpp, not written yet).

}  // namespace lab01
