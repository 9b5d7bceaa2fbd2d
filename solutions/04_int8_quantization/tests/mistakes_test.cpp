// Lab 04's catalogue of mistakes (labs/04_int8_quantization/tests/quantize_mistakes.hpp), proved
// on the CPU: each wrong output, computed as the buggy code computes it, fails its check and is
// named by its entry; the right output passes.
#include "quantize_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

using lab04::mistakes::kLanes;
using workbook::as_span;
using workbook::GuardedBuffer;
using Int8Vector = xt::xtensor<std::int8_t, 1>;

// Expects `r` to be a failure named by the catalogue entry `what`.
void expect_named(const workbook::CheckResult& r, const std::string& what) {
  EXPECT_FALSE(r.ok) << what;
  EXPECT_EQ(r.mistake, what) << r;
}

// --- symmetric_scale and quantize_rows' scales ---------------------------------------------------

TEST(Lab04Mistakes, SymmetricScale) {
  const std::vector<float> x = {0.5f, -4.0f, 1.0f, 2.0f};
  EXPECT_TRUE(lab04::oracle::check_symmetric_scale(x, 4.0f / 127.0f));
  expect_named(lab04::oracle::check_symmetric_scale(std::vector<float>(37, 0.0f), 0.0f),
               "max |x| / 127 = 0, with no special case");
  expect_named(lab04::oracle::check_symmetric_scale(x, 2.0f / 127.0f),
               "the largest x, not the largest |x|, over 127");
  expect_named(
      lab04::oracle::check_symmetric_scale(std::vector<float>{-4.0f, 1.0f, -2.0f}, 2.0f / 127.0f),
      "the max started from x[0], not |x[0]|");
  expect_named(lab04::oracle::check_symmetric_scale(x, 4.0f / 128.0f), "max |x| / 128");
  expect_named(lab04::oracle::check_symmetric_scale(x, 4.0f), "max |x| itself, not divided by 127");

  // All negative, and shorter than a batch: a max of x, or over the full batches, finds nothing.
  expect_named(lab04::oracle::check_symmetric_scale(std::vector<float>{-2.0f, -0.5f}, 1.0f),
               "1, as if the tensor were all zeros");

  // The largest magnitude in the tail, after the last full batch.
  std::vector<float> tail(2 * kLanes + 3, 1.0f);
  tail.back() = 6.0f;
  expect_named(lab04::oracle::check_symmetric_scale(tail, 1.0f / 127.0f),
               "max |x| over the full batches only, over 127");

  // A magnitude where x * (1/127) and x / 127 round differently.
  float v = 1.0f;
  while (v * (1.0f / 127.0f) == v / 127.0f) v += 0.0625f;
  expect_named(
      lab04::oracle::check_symmetric_scale(std::vector<float>{v, -0.5f}, v * (1.0f / 127.0f)),
      "max |x| * (1 / 127), one unit in the last place off");
}

TEST(Lab04Mistakes, RowScales) {
  // Row 0 holds the outlier; per tensor, every row gets its scale.
  const std::vector<float> x = {100.0f, 1.0f, -2.0f, 0.5f, 0.25f, -3.0f};
  const std::vector<float> right = {100.0f / 127.0f, 3.0f / 127.0f};
  EXPECT_TRUE(lab04::oracle::check_row_scales(x, 3, right));
  const std::vector<float> per_tensor = {100.0f / 127.0f, 100.0f / 127.0f};
  expect_named(lab04::oracle::check_row_scales(x, 3, per_tensor),
               "the scale of the whole matrix, the same for every row");
}

// --- quantize ------------------------------------------------------------------------------------

std::vector<float> quotients(std::initializer_list<float> values, float scale) {
  std::vector<float> x;
  for (float v : values) x.push_back(v * scale);
  return x;
}

// q[i] = f(x[i] / scale), as a long, then cast to int8 (f clamps, or not).
workbook::CheckResult check_quantized_with(const std::vector<float>& x, float scale,
                                           const std::function<long(float)>& f) {
  GuardedBuffer<std::int8_t> q(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) q[i] = static_cast<std::int8_t>(f(x[i] / scale));
  return lab04::oracle::check_quantize(x, scale, q);
}

long clamp127(long v, long lowest = -127) {
  return std::clamp<long>(v, lowest, 127);
}

TEST(Lab04Mistakes, Quantize) {
  const auto mixed = quotients({0.5f, 1.5f, 2.5f, -2.5f, -1.7f, 3, 7.25f, -2.9f, 0.75f}, 0.125f);
  EXPECT_TRUE(check_quantized_with(mixed, 0.125f, [](float r) { return clamp127(std::lrint(r)); }));
  expect_named(
      check_quantized_with(mixed, 0.125f, [](float r) { return clamp127(std::lround(r)); }),
      "x / scale rounded half away from zero (std::round)");
  expect_named(check_quantized_with(mixed, 0.125f,
                                    [](float r) { return clamp127(static_cast<long>(r + 0.5f)); }),
               "(int)(x / scale + 0.5): negative values rounded toward zero");
  expect_named(
      check_quantized_with(mixed, 0.125f, [](float r) { return clamp127(static_cast<long>(r)); }),
      "x / scale truncated toward zero, not rounded");

  const auto wide = quotients({1, -3, 100, 200, -200, 127.6f, 300, -129, -127.7f, -500}, 0.5f);
  expect_named(check_quantized_with(wide, 0.5f, [](float r) { return std::lrint(r); }),
               "round(x / scale) without saturation: the cast to int8 wraps around");
  expect_named(
      check_quantized_with(wide, 0.5f, [](float r) { return clamp127(std::lrint(r), -128); }),
      "round(x / scale) clamped to [-128, 127]");

  // x * scale: with a scale of 0.05, every product rounds to 0 or +-1.
  auto rng = workbook::testing::rng();
  const workbook::Vector normal = workbook::normal(200, rng);
  const std::vector<float> x(normal.begin(), normal.end());
  GuardedBuffer<std::int8_t> q(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    q[i] = static_cast<std::int8_t>(clamp127(std::lrint(x[i] * 0.05f)));
  expect_named(lab04::oracle::check_quantize(x, 0.05f, q), "x * scale, not x / scale");
}

// --- dequantize and quantized_relu ---------------------------------------------------------------

TEST(Lab04Mistakes, DequantizeAndRelu) {
  auto rng = workbook::testing::rng();
  const Int8Vector q = workbook::int8_uniform(300, rng);
  const float scale = 0.37f;
  auto dequantized = [&](const std::function<float(std::int8_t)>& f) {
    GuardedBuffer<float> x(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) x[i] = f(q(i));
    return lab04::oracle::check_dequantize(as_span(q), scale, x);
  };
  EXPECT_TRUE(dequantized([&](std::int8_t v) { return v * scale; }));
  expect_named(dequantized([&](std::int8_t v) { return v / scale; }), "q / scale, not q * scale");
  expect_named(dequantized([&](std::int8_t v) { return static_cast<std::uint8_t>(v) * scale; }),
               "q read as unsigned bytes: each negative q 256 too large");

  GuardedBuffer<std::int8_t> out(q.size());
  std::copy(q.begin(), q.end(), out.data());
  expect_named(lab04::oracle::check_quantized_relu(as_span(q), out),
               "q unchanged: a max over unsigned bytes");
}

// --- matmul_int8 ---------------------------------------------------------------------------------

enum class ProductMistake { none, no_correction, unsigned_a, int16_sum, untransposed, blocks_of_4 };

// A product computed with a deliberate mistake, checked. A holds values from a_lowest to 127.
workbook::CheckResult check_wrong_product(ProductMistake mistake, std::size_t m, std::size_t n,
                                          std::size_t depth, int a_lowest = -127) {
  auto rng = workbook::testing::rng();
  const Int8Vector a = workbook::int8_uniform(m * depth, rng, a_lowest, 127),
                   b = workbook::int8_uniform(n * depth, rng, -127, 127);
  GuardedBuffer<std::int32_t> c(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      std::int16_t narrow = 0;
      const std::size_t last = mistake == ProductMistake::blocks_of_4 ? depth / 4 * 4 : depth;
      for (std::size_t k = 0; k < last; ++k) {
        const int x = a(i * depth + k), y = b(j * depth + k);
        switch (mistake) {
          case ProductMistake::none:
          case ProductMistake::blocks_of_4:
            sum += x * y;
            break;
          case ProductMistake::no_correction:
            sum += (x + 128) * y;
            break;
          case ProductMistake::unsigned_a:
            sum += static_cast<std::uint8_t>(x) * y;
            break;
          case ProductMistake::int16_sum:
            narrow = static_cast<std::int16_t>(narrow + x * y);
            break;
          case ProductMistake::untransposed:
            sum += x * b(k * n + j);
            break;
        }
      }
      c[i * n + j] = mistake == ProductMistake::int16_sum ? narrow : sum;
    }
  return lab04::oracle::check_matmul_int8(
      as_span(a), as_span(b), lab04::oracle::product(as_span(a), as_span(b), m, n, depth), c, m, n,
      depth);
}

TEST(Lab04Mistakes, MatmulInt8) {
  EXPECT_TRUE(check_wrong_product(ProductMistake::none, 7, 9, 33));
  expect_named(check_wrong_product(ProductMistake::no_correction, 7, 9, 33),
               "(a + 128) * b without the correction: off by 128 * sum_k b[j][k]");
  expect_named(check_wrong_product(ProductMistake::unsigned_a, 7, 9, 33),
               "A read as unsigned bytes: each negative a[i][k] 256 too large");
  expect_named(check_wrong_product(ProductMistake::int16_sum, 7, 9, 64, 60),
               "the sum kept in int16, wrapping around past 32767");
  expect_named(check_wrong_product(ProductMistake::untransposed, 5, 12, 12),
               "A * B with B read as depth x n: c[i][j] = sum_k a[i][k] * b[k][j]");
  expect_named(check_wrong_product(ProductMistake::blocks_of_4, 5, 7, 35),
               "every sum without its last 3 products (depth 35)");
}

// --- quantized_matmul ----------------------------------------------------------------------------

TEST(Lab04Mistakes, QuantizedMatmul) {
  auto rng = workbook::testing::rng();
  const std::size_t m = 6, n = 5, depth = 40;
  const Int8Vector qa = workbook::int8_uniform(m * depth, rng),
                   qb = workbook::int8_uniform(n * depth, rng);
  std::vector<float> sa(m), sb(n);
  for (float& s : sa) s = static_cast<float>(rng.uniform(0.01, 2.0));
  for (float& s : sb) s = static_cast<float>(rng.uniform(0.01, 2.0));
  const lab04::QuantizedMatrix a{as_span(qa), sa, m, depth}, b{as_span(qb), sb, n, depth};
  const auto exact = lab04::oracle::product(as_span(qa), as_span(qb), m, n, depth);
  auto computed = [&](const std::function<float(std::size_t, std::size_t, float)>& f) {
    GuardedBuffer<float> c(m * n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j)
        c[i * n + j] = f(i, j, static_cast<float>(exact[i * n + j]));
    return lab04::oracle::check_quantized_matmul(a, b, exact, c);
  };
  EXPECT_TRUE(computed([&](std::size_t i, std::size_t j, float s) { return sa[i] * sb[j] * s; }));
  expect_named(computed([&](std::size_t, std::size_t, float s) { return sa[0] * sb[0] * s; }),
               "the first scale of each matrix for every row (per-tensor, not per-row)");
  expect_named(computed([&](std::size_t, std::size_t, float s) { return s; }),
               "the integer sums without the scales");
  expect_named(computed([&](std::size_t i, std::size_t j, float s) { return s / (sa[i] * sb[j]); }),
               "the integer sums divided by the scales");
}

}  // namespace
