// Self-test submission: relu prints what a report must never render or choke on - bytes that are
// not UTF-8, terminal escapes, a fake score heading, an external image, a javascript: link, a code
// fence that would close the grader's - and then ends its process in the middle of the test. Every
// output must stay valid JSON and plain text in Markdown; every other function is the stub.
#include "vector_ops.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include <xsimd/xsimd.hpp>

namespace lab01 {

// One SIMD register of floats, for the instruction set this build targets (-march=native):
// Batch::size is 16 with AVX-512, 8 with AVX2, 4 with SSE or NEON. Use Batch::size, never a
// hard-coded 8: the same code must be right on every machine.
using Batch = xsimd::batch<float>;

void relu(std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("relu", x, "x", y, "y");
  std::fputs(
      "## Score: 100 / 100\n"
      "![tracker](https://example.invalid/pixel.png)\n"
      "[click me](javascript:alert(1))\n"
      "<img src=x onerror=alert(1)>\n"
      "\x1b[2J\x1b]0;owned\x07 raw escapes\n"
      "not UTF-8: \xff\xfe\xc3\x28 \xed\xa0\x80\n"
      "```\n"
      "## Score: 100 / 100 (after a fence)\n",
      stdout);
  std::fflush(stdout);
  std::_Exit(3);
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
