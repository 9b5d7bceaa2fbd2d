// Self-test submission: every function is the stub, and the file replaces the harness's check that
// inputs are unchanged with one that always succeeds. The grader refuses to link it.
#include "vector_ops.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include <workbook/check.hpp>

namespace workbook {

CheckResult check_unchanged(std::span<const float>, std::span<const float>, const Where&,
                            const std::string&) {
  return {};
}

}  // namespace workbook

namespace lab01 {

// One SIMD register of floats, for the instruction set this build targets (-march=native):
// Batch::size is 16 with AVX-512, 8 with AVX2, 4 with SSE or NEON. Use Batch::size, never a
// hard-coded 8: the same code must be right on every machine.
using Batch = xsimd::batch<float>;

void relu(std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("relu", x, "x", y, "y");
  // TODO(lab01) step 1: for each full batch, load Batch::size elements of x
  // (Batch::load_unaligned), keep the positive ones and NaN, zero the rest (xsimd::select with a
  // comparison), and store the batch to y. Then finish the last x.size() % Batch::size elements
  // with a scalar tail loop.
  throw workbook::NotImplemented("relu");
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
