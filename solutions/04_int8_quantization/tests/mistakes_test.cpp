// Lab 04's catalogue of mistakes (labs/04_int8_quantization/tests/quantize_mistakes.hpp), proved
// on the CPU: each wrong output, computed as the buggy code computes it, fails its check and is
// named by its entry; the right output passes.
#include "quantize_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
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

  // inf for finite inputs: a square (or product) on the way overflowed, not a reduction's range.
  const workbook::CheckResult squared = lab04::oracle::check_symmetric_scale(
      std::vector<float>{3.0e38f, -1.0f}, std::numeric_limits<float>::infinity());
  EXPECT_THAT(squared.diagnosis, ::testing::HasSubstr("passed float's largest, 3.4e38"));
  EXPECT_THAT(squared.diagnosis, ::testing::Not(::testing::HasSubstr("tail included")));
}

TEST(Lab04Mistakes, RowScales) {
  // Row 1 holds the outlier; per tensor, every row gets its scale.
  const std::vector<float> x = {1.0f, -2.0f, 0.5f, 100.0f, 0.25f, -3.0f};
  const std::vector<float> right = {2.0f / 127.0f, 100.0f / 127.0f};
  EXPECT_TRUE(lab04::oracle::check_row_scales(x, 3, right));
  // (With two rows, per tensor is also row 1's scale for row 0: both are named.)
  const std::vector<float> per_tensor = {100.0f / 127.0f, 100.0f / 127.0f};
  EXPECT_THAT(lab04::oracle::check_row_scales(x, 3, per_tensor).mistake,
              ::testing::StartsWith("the scale of the whole matrix, the same for every row"));
  // Three rows, the largest magnitude of each elsewhere: row 0's scale, and rows started at x[r].
  const std::vector<float> three = {1.0f, -2.0f, 0.5f, 8.0f, 1.0f, 0.25f, -4.0f, 0.5f, -9.0f};
  expect_named(lab04::oracle::check_row_scales(
                   three, 3, std::vector<float>{2.0f / 127, 2.0f / 127, 2.0f / 127}),
               "the scale of row 0, the same for every row");
  expect_named(lab04::oracle::check_row_scales(
                   three, 3, std::vector<float>{2.0f / 127, 8.0f / 127, 8.0f / 127}),
               "the scale of x[r, r + cols) for row r: the row's start without '* cols'");
  // Each row's scale scanned from its neighbour: the row before, or the row after.
  expect_named(lab04::oracle::check_row_scales(
                   three, 3, std::vector<float>{2.0f / 127, 2.0f / 127, 8.0f / 127}),
               "the scale of row r - 1 for every row r after the first (each row's scale scanned "
               "from the row before it)");
  expect_named(lab04::oracle::check_row_scales(
                   three, 3, std::vector<float>{8.0f / 127, 9.0f / 127, 9.0f / 127}),
               "the scale of row r + 1 for every row r before the last (each row's scale scanned "
               "from the row after it)");
  // No rule over every row: the first wrong row's scale is said to be another row's.
  EXPECT_THAT(lab04::oracle::check_row_scales(
                  three, 3, std::vector<float>{2.0f / 127, 9.0f / 127, 9.0f / 127})
                  .diagnosis,
              ::testing::HasSubstr("the scale of row 1 is exactly that of row 2"));
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
  expect_named(
      check_quantized_with(
          wide, 0.5f, [](float r) { return clamp127(static_cast<std::int8_t>(std::lrint(r))); }),
      "round(x / scale) cast to int8 before the clamp: the cast wrapped around first");
  expect_named(
      check_quantized_with(
          mixed, 0.125f, [](float r) { return clamp127(static_cast<long>(std::floor(r + 0.5f))); }),
      "floor(x / scale + 0.5): ties rounded up, not to the even neighbour");
  expect_named(
      check_quantized_with(mixed, 0.125f,
                           [](float r) { return clamp127(static_cast<long>(std::floor(r))); }),
      "x / scale rounded down (std::floor)");

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
  expect_named(dequantized([&](std::int8_t v) { return v * scale / 127; }),
               "q * scale / 127, as if the scale were max |x|");

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

// A product computed by `f` (an int64 sum of row i of A and row j of B, stored as int32, which
// wraps), checked. A holds values from a_lowest to 127.
using Rows = std::function<std::int64_t(const std::int8_t* a, const std::int8_t* b, std::size_t i,
                                        std::size_t j)>;
workbook::CheckResult check_product_with(std::size_t m, std::size_t n, std::size_t depth,
                                         const Rows& f, int a_lowest = -127) {
  auto rng = workbook::testing::rng();
  const Int8Vector a = workbook::int8_uniform(m * depth, rng, a_lowest, 127),
                   b = workbook::int8_uniform(n * depth, rng, -127, 127);
  GuardedBuffer<std::int32_t> c(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      c[i * n + j] = static_cast<std::int32_t>(f(a.data(), b.data(), i, j));
  return lab04::oracle::check_matmul_int8(
      as_span(a), as_span(b), lab04::oracle::product(as_span(a), as_span(b), m, n, depth), c, m, n,
      depth);
}

// sum over k in [first, last) of weight_a(a_ik) * b_jk, for rows of `depth`.
std::int64_t dot(const std::int8_t* a, const std::int8_t* b, std::size_t i, std::size_t j,
                 std::size_t depth, std::size_t first, std::size_t last, int offset = 0) {
  std::int64_t s = 0;
  for (std::size_t k = first; k < last; ++k) s += (a[i * depth + k] + offset) * b[j * depth + k];
  return s;
}

std::int64_t row_sum(const std::int8_t* b, std::size_t j, std::size_t depth) {
  std::int64_t s = 0;
  for (std::size_t k = 0; k < depth; ++k) s += b[j * depth + k];
  return s;
}

TEST(Lab04Mistakes, MatmulInt8Offsets) {
  const std::size_t m = 6, n = 9, d = 37;
  expect_named(check_product_with(m, n, d,
                                  [=](auto a, auto b, auto i, auto j) {
                                    return dot(a, b, i, j, d, 0, d, 128) + 128 * row_sum(b, j, d);
                                  }),
               "(a + 128) * b with the correction added, not subtracted: off by 256 * sum_k "
               "b[j][k]");
  expect_named(check_product_with(m, n, d,
                                  [=](auto a, auto b, auto i, auto j) {
                                    return dot(a, b, i, j, d, 0, d, 128) - 128 * row_sum(a, i, d);
                                  }),
               "(a + 128) * b corrected with the sums of A's rows: off by 128 * (sum_k b[j][k] - "
               "sum_k a[i][k])");
  expect_named(check_product_with(m, n, d,
                                  [=](auto a, auto b, auto i, auto j) {
                                    std::int64_t s = 0;
                                    for (std::size_t k = 0; k < d; ++k)
                                      s += a[i * d + k] * static_cast<std::uint8_t>(b[j * d + k]);
                                    return s;
                                  }),
               "B read as unsigned bytes: each negative b[j][k] 256 too large");
  // vpmaddubsw: pairs of (a + 128) * b saturated to int16, then the offset corrected.
  expect_named(check_product_with(m, n, d,
                                  [=](auto a, auto b, auto i, auto j) {
                                    std::int64_t s = 0;
                                    for (std::size_t k = 0; k < d; k += 2)
                                      s += std::clamp<std::int64_t>(
                                          dot(a, b, i, j, d, k, std::min(k + 2, d), 128), -32768,
                                          32767);
                                    return s - 128 * row_sum(b, j, d);
                                  }),
               "pairs of (a + 128) * b products saturated to int16 (vpmaddubsw), then corrected");

  // Not in the catalogue, said as observed: corrected with 127 times the sums of B's rows (off by
  // one sum per column), and corrected for only the first half of the depth (multiples of 128).
  const workbook::CheckResult by_127 =
      check_product_with(m, n, d, [=](auto a, auto b, auto i, auto j) {
        return dot(a, b, i, j, d, 0, d, 128) - 127 * row_sum(b, j, d);
      });
  EXPECT_TRUE(by_127.mistake.empty()) << by_127;
  EXPECT_NE(by_127.diagnosis.find("the column j of C only"), std::string::npos) << by_127;
  const workbook::CheckResult half =
      check_product_with(m, n, d, [=](auto a, auto b, auto i, auto j) {
        return dot(a, b, i, j, d, 0, d / 2, 128) - 128 * row_sum(b, j, d) +
               dot(a, b, i, j, d, d / 2, d);
      });
  EXPECT_TRUE(half.mistake.empty()) << half;
  EXPECT_NE(half.diagnosis.find("a multiple of 128"), std::string::npos) << half;
}

TEST(Lab04Mistakes, MatmulInt8Widths) {
  const std::size_t m = 5, n = 7, d = 64;
  expect_named(check_product_with(m, n, d,
                                  [=](auto a, auto b, auto i, auto j) {
                                    return static_cast<std::int8_t>(dot(a, b, i, j, d, 0, d));
                                  }),
               "the sum kept in int8, wrapping around past 127");
  // 16 lanes of int16 partial sums, widened only at the end: a multiple of 65536 off, but not the
  // int16 sum itself.
  const workbook::CheckResult lanes = check_product_with(
      m, n, d,
      [=](auto a, auto b, auto i, auto j) {
        std::int64_t s = 0;
        for (std::size_t lane = 0; lane < 16; ++lane) {
          std::int16_t partial = 0;
          for (std::size_t k = lane; k < d; k += 16)
            partial = static_cast<std::int16_t>(partial + a[i * d + k] * b[j * d + k]);
          s += partial;
        }
        return s;
      },
      100);
  EXPECT_TRUE(lanes.mistake.empty()) << lanes;
  EXPECT_NE(lanes.diagnosis.find("a multiple of 65536"), std::string::npos) << lanes;
}

TEST(Lab04Mistakes, MatmulInt8Depth) {
  const std::size_t m = 4, n = 6, d = 70;
  expect_named(check_product_with(m, n, d,
                                  [=](auto a, auto b, auto i, auto j) {
                                    std::int64_t s = 0;
                                    for (std::size_t k = 0; k < d; ++k)
                                      s += a[k * m + i] * b[j * d + k];
                                    return s;
                                  }),
               "A read as depth x m: c[i][j] = sum_k a[k][i] * b[j][k]");
  expect_named(
      check_product_with(m, n, d,
                         [=](auto a, auto b, auto i, auto j) { return dot(a, b, i, j, d, 1, d); }),
      "every sum without its first product (the depth loop started at k = 1)");
  // Blocks of 16 (70 = 4 * 16 + 6), the remainder loop started at 0.
  expect_named(check_product_with(m, n, d,
                                  [=](auto a, auto b, auto i, auto j) {
                                    return dot(a, b, i, j, d, 0, 64) + dot(a, b, i, j, d, 0, 6);
                                  }),
               "every sum with its first 6 products in place of its last 6 (depth 70)");
  // Blocks of 32, the sum reset at each: only k = 64..69 remain.
  expect_named(
      check_product_with(m, n, d,
                         [=](auto a, auto b, auto i, auto j) { return dot(a, b, i, j, d, 64, d); }),
      "every sum over its last block of the depth only (k from 64 to 70)");
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
  expect_named(computed([&](std::size_t i, std::size_t j, float s) {
                 return sa[i] * sb[j] * (sa[i] * sb[j] * s);
               }),
               "the scales applied twice: (a.scale(i) * b.scale(j))^2 times the integer sums");
  expect_named(computed([&](std::size_t i, std::size_t, float s) { return sa[i] * s; }),
               "the integer sums times A's scale only");
  expect_named(computed([&](std::size_t, std::size_t j, float s) { return sb[j] * s; }),
               "the integer sums times B's scale only");
  // The scales of the wrong rows: in range only when A and B have as many rows (here, A's first 5).
  const lab04::QuantizedMatrix a5{as_span(qa).first(n * depth), std::span(sa).first(n), n, depth};
  const auto exact5 = lab04::oracle::product(a5.values, b.values, n, n, depth);
  GuardedBuffer<float> c5(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      c5[i * n + j] = sa[j] * sb[i] * static_cast<float>(exact5[i * n + j]);
  expect_named(lab04::oracle::check_quantized_matmul(a5, b, exact5, c5),
               "the scales of the wrong rows: a.scale(j) * b.scale(i)");
}

TEST(Lab04Mistakes, QuantizedMatmulOfAWrongIntegerProduct) {
  // quantized_matmul calls matmul_int8: a wrong integer product, scaled rightly, is named as such.
  auto rng = workbook::testing::rng();
  const std::size_t m = 6, n = 5, depth = 300;
  const Int8Vector qa = workbook::int8_uniform(m * depth, rng, 50, 127),
                   qb = workbook::int8_uniform(n * depth, rng);
  std::vector<float> sa(m), sb(n);
  for (float& s : sa) s = static_cast<float>(rng.uniform(0.01, 2.0));
  for (float& s : sb) s = static_cast<float>(rng.uniform(0.01, 2.0));
  const lab04::QuantizedMatrix a{as_span(qa), sa, m, depth}, b{as_span(qb), sb, n, depth};
  const auto exact = lab04::oracle::product(as_span(qa), as_span(qb), m, n, depth);
  std::vector<std::int64_t> row_b(n, 0);
  for (std::size_t k = 0; k < n * depth; ++k) row_b[k / depth] += qb(k);
  auto computed = [&](const std::function<std::int32_t(std::size_t, std::size_t)>& sum) {
    GuardedBuffer<float> c(m * n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j)
        c[i * n + j] = sa[i] * sb[j] * static_cast<float>(sum(i, j));
    return lab04::oracle::check_quantized_matmul(a, b, exact, c);
  };
  expect_named(computed([&](std::size_t i, std::size_t j) {
                 return static_cast<std::int16_t>(exact[i * n + j]);
               }),
               "the scales times the sum kept in int16, wrapping around past 32767");
  expect_named(computed([&](std::size_t i, std::size_t j) {
                 return static_cast<std::int32_t>(exact[i * n + j] + 128 * row_b[j]);
               }),
               "the scales times (a + 128) * b without the correction: off by 128 * sum_k b[j][k]");
}

// --- The accuracy tests: a result outside the error model, traced to the step that is wrong
// -------

TEST(Lab04Mistakes, AccuracyTracedToTheWrongStep) {
  auto rng = workbook::testing::rng();
  const std::size_t m = 12, n = 10, depth = 200;
  const workbook::Vector xa = workbook::normal(m * depth, rng),
                         xb = workbook::normal(n * depth, rng);
  // Quantized per row as the oracle does, or with quantize truncating.
  auto quantize_rows = [depth](const workbook::Vector& x, std::size_t rows, bool truncate) {
    std::pair<Int8Vector, std::vector<float>> q{Int8Vector::from_shape({rows * depth}),
                                                std::vector<float>(rows)};
    for (std::size_t r = 0; r < rows; ++r) {
      q.second[r] = lab04::oracle::symmetric_scale(as_span(x).subspan(r * depth, depth));
      for (std::size_t k = 0; k < depth; ++k) {
        const float v = x(r * depth + k) / q.second[r];
        q.first(r * depth + k) = static_cast<std::int8_t>(
            truncate ? std::trunc(v) : lab04::oracle::quantized(x(r * depth + k), q.second[r]));
      }
    }
    return q;
  };
  const auto qa = quantize_rows(xa, m, false), qb = quantize_rows(xb, n, false);
  const auto truncated = quantize_rows(xb, n, true);
  const lab04::QuantizedMatrix a{as_span(qa.first), qa.second, m, depth},
      b{as_span(qb.first), qb.second, n, depth},
      b_truncated{as_span(truncated.first), truncated.second, n, depth};
  auto product_of = [&](const lab04::QuantizedMatrix& b, bool scaled) {
    const auto exact = lab04::oracle::product(a.values, b.values, m, n, depth);
    GuardedBuffer<float> c(m * n);
    for (std::size_t e = 0; e < m * n; ++e)
      c[e] = (scaled ? a.scale(e / n) * b.scale(e % n) : 1.0f) * static_cast<float>(exact[e]);
    return c;
  };

  const auto right = lab04::oracle::accuracy_bound(as_span(xa), as_span(xb), a, b);
  EXPECT_TRUE(lab04::oracle::check_accuracy(right, m, n, product_of(b, true)));
  // The scales left out: named by quantized_matmul's catalogue, in both accuracy tests.
  const GuardedBuffer<float> unscaled = product_of(b, false);
  expect_named(lab04::oracle::check_accuracy(right, m, n, unscaled),
               "the integer sums without the scales");
  EXPECT_NE(lab04::oracle::explain_typical_error(right, unscaled.span(), 100)
                .find("your output matches the integer sums without the scales"),
            std::string::npos);
  // B quantized by truncation: named by quantize's catalogue, before the product is looked at.
  const auto truncated_bound =
      lab04::oracle::accuracy_bound(as_span(xa), as_span(xb), a, b_truncated);
  const GuardedBuffer<float> from_truncated = product_of(b_truncated, true);
  const workbook::CheckResult r =
      lab04::oracle::check_steps(truncated_bound, from_truncated.span());
  expect_named(r, "x / scale truncated toward zero, not rounded");
  EXPECT_NE(r.summary.find("the quantization of B is wrong"), std::string::npos) << r;
  // A round trip through a truncating quantize.
  std::vector<float> back(m * depth);
  std::vector<std::int8_t> q(m * depth);
  const float scale = lab04::oracle::symmetric_scale(as_span(xa));
  for (std::size_t i = 0; i < q.size(); ++i) {
    q[i] = static_cast<std::int8_t>(std::trunc(xa(i) / scale));
    back[i] = q[i] * scale;
  }
  EXPECT_NE(lab04::oracle::explain_round_trip(as_span(xa), scale, q, back)
                .find("your output matches x / scale truncated toward zero"),
            std::string::npos);
}

}  // namespace
