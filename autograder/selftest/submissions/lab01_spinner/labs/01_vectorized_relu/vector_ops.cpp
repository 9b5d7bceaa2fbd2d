// Self-test submission: relu is right, and as fast as a plain vectorised loop, but the first time
// it is called on the perf case's input (64 Mi floats) it leaves three threads spinning for ever.
// Timed in turn with the reference on the same cores, they would slow the reference down; the perf
// driver freezes the student's whole process while the reference is timed, and counts the CPU time
// of all its threads while it is timed: more cores busy than the case's one thread, flagged, and
// judged by that work. The other functions are the stub's.
#include "vector_ops.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>

#include <cmath>
#include <cstddef>
#include <thread>

#include <xsimd/xsimd.hpp>

namespace lab01 {

// One SIMD register of floats, for the instruction set this build targets (-march=native):
// Batch::size is 16 with AVX-512, 8 with AVX2, 4 with SSE or NEON. Use Batch::size, never a
// hard-coded 8: the same code must be right on every machine.
using Batch = xsimd::batch<float>;

void relu(std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("relu", x, "x", y, "y");
  static bool spinning = false;
  if (x.size() == (std::size_t{64} << 20) && !spinning) {
    spinning = true;
    for (int i = 0; i < 3; ++i)
      std::thread([] {
        for (;;) asm volatile("" ::: "memory");
      }).detach();
  }
  const Batch zero(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    xsimd::select(v <= zero, zero, v).store_unaligned(&y[i]);
  }
  for (; i < x.size(); ++i) y[i] = x[i] <= 0.0f ? 0.0f : x[i];
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
