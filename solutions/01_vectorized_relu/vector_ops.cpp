// Lab 01 reference solution: vectorized ReLU and vector operations with xsimd.
//
// Elementwise kernels are memory bound (an eighth of a FLOP per byte for ReLU), so they aim at the
// copy bandwidth: whole batches, and streaming stores for large outputs. Reductions are bound by
// the core: several accumulators keep the FMA and load units busy instead of waiting on latency.
#include "vector_ops.hpp"

#include "simd_loops.hpp"

#include <workbook/require.hpp>

#include <cmath>

namespace lab01 {

using loops::Batch;
using loops::Stores;

// Four accumulators. A dot product loads two floats per FMA, and a core loads at most two SIMD
// registers per cycle, so it can start one FMA per cycle; an FMA takes about 4 cycles, so four
// independent chains keep it busy. (A kernel that reuses its loads, like a matrix product, needs
// more: two FMA units x 4 cycles = 8. The bench compares 1, 2, 4 and 8.)
constexpr std::size_t kAccumulators = 4;

void relu(std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("relu", x, "x", y, "y");
  const Batch zero(0.0f);
  // `x <= 0` is false for NaN, so NaN keeps its value (PyTorch's semantics); -0 becomes +0.
  loops::elementwise(
      y.data(), x.size(), Stores::automatic,
      [&](std::size_t i) {
        const Batch v = Batch::load_unaligned(&x[i]);
        return xsimd::select(v <= zero, zero, v);
      },
      [&](std::size_t i) { return x[i] <= 0.0f ? 0.0f : x[i]; });
}

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("add", a, "a", out, "out");
  workbook::require_elementwise("add", b, "b", out, "out");
  loops::elementwise(
      out.data(), a.size(), Stores::automatic,
      [&](std::size_t i) { return Batch::load_unaligned(&a[i]) + Batch::load_unaligned(&b[i]); },
      [&](std::size_t i) { return a[i] + b[i]; });
}

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("multiply", a, "a", out, "out");
  workbook::require_elementwise("multiply", b, "b", out, "out");
  loops::elementwise(
      out.data(), a.size(), Stores::automatic,
      [&](std::size_t i) { return Batch::load_unaligned(&a[i]) * Batch::load_unaligned(&b[i]); },
      [&](std::size_t i) { return a[i] * b[i]; });
}

void squared_difference(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("squared_difference", a, "a", out, "out");
  workbook::require_elementwise("squared_difference", b, "b", out, "out");
  loops::elementwise(
      out.data(), a.size(), Stores::automatic,
      [&](std::size_t i) {
        const Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
        return d * d;
      },
      [&](std::size_t i) {
        const float d = a[i] - b[i];
        return d * d;
      });
}

float dot(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("dot", a.size(), "a", b.size(), "b");
  return loops::reduce<kAccumulators>(
      a.size(),
      [&](Batch acc, std::size_t i) {
        return xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
      },
      [&](std::size_t i) { return a[i] * b[i]; });
}

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("euclidean_distance", a.size(), "a", b.size(), "b");
  const float sum_of_squares = loops::reduce<kAccumulators>(
      a.size(),
      [&](Batch acc, std::size_t i) {
        const Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
        return xsimd::fma(d, d, acc);
      },
      [&](std::size_t i) {
        const float d = a[i] - b[i];
        return d * d;
      });
  return std::sqrt(sum_of_squares);
}

}  // namespace lab01
