// Self-test submission: lab 01 does not compile (a missing semicolon, an undeclared name); lab 99
// is right. Lab 01 gets zero with the compiler's first errors; lab 99 is graded as usual.
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
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] <= 0.0f ? 0.0f : x[i] undeclared_name = 1;
}

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("add", a, "a", out, "out");
  workbook::require_elementwise("add", b, "b", out, "out");
  // TODO(lab01) step 2: the same loop shape as relu, with two inputs.
  throw workbook::NotImplemented("add");
}

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("multiply", a, "a", out, "out");
  workbook::require_elementwise("multiply", b, "b", out, "out");
  // TODO(lab01) step 2.
  throw workbook::NotImplemented("multiply");
}

void squared_difference(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("squared_difference", a, "a", out, "out");
  workbook::require_elementwise("squared_difference", b, "b", out, "out");
  // TODO(lab01) step 2: d = a - b, then d * d.
  throw workbook::NotImplemented("squared_difference");
}

float dot(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("dot", a.size(), "a", b.size(), "b");
  // TODO(lab01) step 3: accumulate a * b batch by batch with xsimd::fma into one Batch accumulator,
  // reduce its lanes with xsimd::hadd, and add the scalar tail. Then step 4: use several
  // independent accumulators and measure the difference (the handout explains why it matters).
  throw workbook::NotImplemented("dot");
}

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("euclidean_distance", a.size(), "a", b.size(), "b");
  // TODO(lab01) step 5: like dot, accumulating d * d for d = a - b; the square root at the end.
  throw workbook::NotImplemented("euclidean_distance");
}

}  // namespace lab01
