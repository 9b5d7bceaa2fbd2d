// Mistake: a dot over groups of four accumulators adds them into the total before the loop of
// single batches that follows, which then adds into acc0 only: those batches are lost.
// Checked by: Dot.MatchesOracleAtEverySize
// Expect: your result matches the sum without the whole batches after the last group of 4
// Expect: Combine the accumulators after every loop over batches
// Lab 01: my implementation.
#include "vector_ops.hpp"

#include <workbook/require.hpp>

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab01 {

using Batch = xsimd::batch<float>;

void relu(std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("relu", x, "x", y, "y");
  const std::size_t n = x.size();
  const Batch zero(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= n; i += Batch::size) {
    Batch v = Batch::load_unaligned(&x[i]);
    Batch r = xsimd::select(v <= zero, zero, v);  // NaN <= 0 is false, so NaN stays
    r.store_unaligned(&y[i]);
  }
  for (; i < n; ++i) {
    y[i] = (x[i] <= 0.0f) ? 0.0f : x[i];
  }
}

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("add", a, "a", out, "out");
  workbook::require_elementwise("add", b, "b", out, "out");
  const std::size_t n = a.size();
  std::size_t i = 0;
  for (; i + Batch::size <= n; i += Batch::size) {
    Batch va = Batch::load_unaligned(&a[i]);
    Batch vb = Batch::load_unaligned(&b[i]);
    (va + vb).store_unaligned(&out[i]);
  }
  for (; i < n; ++i) out[i] = a[i] + b[i];
}

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("multiply", a, "a", out, "out");
  workbook::require_elementwise("multiply", b, "b", out, "out");
  const std::size_t n = a.size();
  std::size_t i = 0;
  for (; i + Batch::size <= n; i += Batch::size) {
    Batch va = Batch::load_unaligned(&a[i]);
    Batch vb = Batch::load_unaligned(&b[i]);
    (va * vb).store_unaligned(&out[i]);
  }
  for (; i < n; ++i) out[i] = a[i] * b[i];
}

void squared_difference(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("squared_difference", a, "a", out, "out");
  workbook::require_elementwise("squared_difference", b, "b", out, "out");
  const std::size_t n = a.size();
  std::size_t i = 0;
  for (; i + Batch::size <= n; i += Batch::size) {
    Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
    (d * d).store_unaligned(&out[i]);
  }
  for (; i < n; ++i) {
    float d = a[i] - b[i];
    out[i] = d * d;
  }
}

float dot(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("dot", a.size(), "a", b.size(), "b");
  const std::size_t n = a.size();
  Batch acc0(0.0f), acc1(0.0f), acc2(0.0f), acc3(0.0f);
  std::size_t i = 0;
  constexpr std::size_t W = Batch::size;
  for (; i + 4 * W <= n; i += 4 * W) {
    acc0 = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc0);
    acc1 = xsimd::fma(Batch::load_unaligned(&a[i + W]), Batch::load_unaligned(&b[i + W]), acc1);
    acc2 = xsimd::fma(Batch::load_unaligned(&a[i + 2 * W]), Batch::load_unaligned(&b[i + 2 * W]),
                      acc2);
    acc3 = xsimd::fma(Batch::load_unaligned(&a[i + 3 * W]), Batch::load_unaligned(&b[i + 3 * W]),
                      acc3);
  }
  Batch total = (acc0 + acc1) + (acc2 + acc3);
  for (; i + W <= n; i += W) {
    acc0 = xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc0);
  }
  float sum = xsimd::hadd(total);
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * b[i];
  return sum + tail;
}

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("euclidean_distance", a.size(), "a", b.size(), "b");
  const std::size_t n = a.size();
  Batch acc(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= n; i += Batch::size) {
    Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
    acc = xsimd::fma(d, d, acc);
  }
  float sum = xsimd::hadd(acc);
  for (; i < n; ++i) {
    float d = a[i] - b[i];
    sum += d * d;
  }
  return std::sqrt(sum);
}

}  // namespace lab01
