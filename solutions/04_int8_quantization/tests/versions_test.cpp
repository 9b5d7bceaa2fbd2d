// Every numbered version of lab 04 is correct: they differ only in speed. And the checker's
// diagnoses name the usual quantization mistakes, tried here on deliberately wrong kernels.
#include "versions.hpp"
#include "quantize.hpp"
#include "quantize_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <gmock/gmock.h>

#include <cmath>
#include <tuple>
#include <vector>

namespace {

using workbook::as_span;
using workbook::GuardedBuffer;
using Int8Vector = xt::xtensor<std::int8_t, 1>;
using ::testing::HasSubstr;
namespace v = lab04::versions;

const std::vector<std::pair<const char*, v::Product*>> kProducts = {
    {"v1", v::matmul_v1_scalar},
    {"v2", v::matmul_v2_autovectorized},
    {"v3", v::matmul_v3_vpdpbusd_rows},
    {"v4", v::matmul_v4_packed_avx2},
    {"portable fallback", v::matmul_portable_fallback}};

TEST(Versions, EveryProductVersionMatchesTheOracle) {
  auto rng = workbook::testing::rng();
  for (auto [name, product] : kProducts)
    for (auto [m, n, depth] :
         std::vector<std::tuple<std::size_t, std::size_t, std::size_t>>{{1, 1, 1},
                                                                        {3, 5, 7},
                                                                        {4, 4, 64},
                                                                        {5, 17, 65},
                                                                        {13, 33, 130},
                                                                        {64, 70, 257},
                                                                        {9, 3, 0}}) {
      const Int8Vector a = workbook::int8_uniform(m * depth, rng),
                       b = workbook::int8_uniform(n * depth, rng);
      GuardedBuffer<std::int32_t> c(m * n);
      product(as_span(a), as_span(b), c.span(), m, n, depth);
      ASSERT_CORRECT(lab04::oracle::check_matmul_int8(
          as_span(a), as_span(b), lab04::oracle::product(as_span(a), as_span(b), m, n, depth), c, m,
          n, depth))
          << name << ", " << m << " x " << n << " x " << depth;
    }
}

TEST(Versions, EveryProductVersionIsExactAtTheLargestDepth) {
  // Sums within 20200 of INT32_MAX: the versions that add 128 to A wrap around on the way.
  const std::size_t m = 3, n = 2, depth = lab04::kMaxDepth;
  Int8Vector a = Int8Vector::from_shape({m * depth}), b = Int8Vector::from_shape({n * depth});
  for (std::size_t k = 0; k < m * depth; ++k) a(k) = k / depth == 1 ? -127 : 127;
  for (std::size_t k = 0; k < n * depth; ++k) b(k) = k / depth == 0 ? 127 : -127;
  const auto want = lab04::oracle::product(as_span(a), as_span(b), m, n, depth);
  for (auto [name, product] : kProducts) {
    GuardedBuffer<std::int32_t> c(m * n);
    product(as_span(a), as_span(b), c.span(), m, n, depth);
    ASSERT_CORRECT(lab04::oracle::check_matmul_int8(as_span(a), as_span(b), want, c, m, n, depth))
        << name;
  }
}

TEST(Versions, EveryQuantizeVersionMatchesTheOracle) {
  auto rng = workbook::testing::rng();
  for (auto quantize : {v::quantize_v1_scalar, v::quantize_v2_xsimd_conversions}) {
    for (std::size_t n : {0, 1, 15, 16, 17, 67, 1000}) {
      const workbook::Vector x = workbook::adversarial(n, rng, workbook::Specials::finite);
      GuardedBuffer<std::int8_t> q(n);
      quantize(as_span(x), 1e-3f, q.span());
      ASSERT_CORRECT(lab04::oracle::check_quantize(as_span(x), 1e-3f, q)) << "n = " << n;
    }
    std::vector<float> x(40, 1.0f);
    x[39] = NAN;
    std::vector<std::int8_t> q(x.size());
    EXPECT_THROW(quantize(x, 1.0f, q), std::invalid_argument) << "a NaN in the tail";
  }
}

TEST(Versions, QuantizeRowsV1MatchesTheOracle) {
  auto rng = workbook::testing::rng();
  for (auto [rows, cols] :
       std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {7, 33}, {64, 100}, {2048, 4099}}) {
    const workbook::Vector x = workbook::normal(rows * cols, rng);
    std::vector<float> scales(rows);
    GuardedBuffer<std::int8_t> q(x.size());
    v::quantize_rows_v1_two_passes(as_span(x), cols, scales, q.span());
    for (std::size_t r = 0; r < rows; ++r)
      ASSERT_CORRECT(lab04::oracle::check_symmetric_scale(as_span(x).subspan(r * cols, cols),
                                                          scales[r], "quantize_rows"))
          << "row " << r;
    ASSERT_CORRECT(lab04::oracle::check_quantize(as_span(x), scales, cols, q, "quantize_rows"))
        << rows << " x " << cols;
  }
}

TEST(Versions, DequantizeV1MatchesTheOracle) {
  auto rng = workbook::testing::rng();
  const Int8Vector q = workbook::int8_uniform(1003, rng);
  GuardedBuffer<float> x(q.size());
  v::dequantize_v1_scalar(as_span(q), 0.37f, x.span());
  EXPECT_CORRECT(lab04::oracle::check_dequantize(as_span(q), 0.37f, x));
}

// --- The diagnoses: wrong kernels must be recognised by name ----------------------------------

// Quantizes with `round` (a float -> integer rounding), then clamps to [lower, 127] if `clamp`
// (else casts straight to int8, which wraps).
template <class Round>
workbook::CheckResult check_wrong_quantize(Round round, int lower, bool clamp, std::vector<float> x,
                                           float scale) {
  GuardedBuffer<std::int8_t> q(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long r = round(x[i] / scale);
    q[i] = static_cast<std::int8_t>(clamp ? std::clamp<long>(r, lower, 127) : r);
  }
  return lab04::oracle::check_quantize(x, scale, q);
}

std::vector<float> quotients(std::initializer_list<float> values, float scale) {
  std::vector<float> x;
  for (float v : values) x.push_back(v * scale);
  return x;
}

TEST(Diagnoses, AWrappingCastIsSaturationMissing) {
  const auto x = quotients({1, -3, 100, 200, -200, 127.6f, 300, -129}, 0.5f);
  const auto r = check_wrong_quantize([](float q) { return std::lrint(q); }, -127, false, x, 0.5f);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("saturation missing")) << r.report();
}

TEST(Diagnoses, ClampingToMinus128IsCalledOut) {
  const auto x = quotients({1, -3, -127.7f, -500, 12}, 0.25f);
  const auto r = check_wrong_quantize([](float q) { return std::lrint(q); }, -128, true, x, 0.25f);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("-128 is outside the range")) << r.report();
}

TEST(Diagnoses, RoundingHalfAwayFromZeroIsCalledOut) {
  const auto x = quotients({0.5f, 1.5f, 2.5f, -2.5f, 3, 7.25f}, 0.125f);
  const auto r =
      check_wrong_quantize([](float q) { return std::lround(q); }, -127, true, x, 0.125f);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("ties must go to the even neighbour")) << r.report();
}

TEST(Diagnoses, TruncationIsCalledOut) {
  const auto x = quotients({0.75f, 1.6f, -2.9f, 3, 4.2f}, 0.125f);
  const auto r =
      check_wrong_quantize([](float q) { return static_cast<long>(q); }, -127, true, x, 0.125f);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("truncated toward zero")) << r.report();
}

// A product with a deliberate mistake: the +128 offset without its correction, an int16 sum, or
// B read as depth x n.
enum class ProductMistake { no_correction, int16_sum, untransposed };

workbook::CheckResult check_wrong_product(ProductMistake mistake, std::size_t m, std::size_t n,
                                          std::size_t depth) {
  auto rng = workbook::testing::rng();
  const Int8Vector a = workbook::int8_uniform(m * depth, rng, 60, 127),
                   b = workbook::int8_uniform(n * depth, rng, -127, 127);
  GuardedBuffer<std::int32_t> c(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      std::int16_t narrow = 0;
      for (std::size_t k = 0; k < depth; ++k) {
        const int x = a(i * depth + k);
        switch (mistake) {
          case ProductMistake::no_correction:
            sum += (x + 128) * b(j * depth + k);
            break;
          case ProductMistake::int16_sum:
            narrow = static_cast<std::int16_t>(narrow + x * b(j * depth + k));
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

TEST(Diagnoses, AMissingOffsetCorrectionIsCalledOut) {
  const auto r = check_wrong_product(ProductMistake::no_correction, 7, 9, 33);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("did not subtract 128 times the sums")) << r.report();
}

TEST(Diagnoses, AnInt16SumIsCalledOut) {
  const auto r = check_wrong_product(ProductMistake::int16_sum, 7, 9, 64);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("kept in 16 bits")) << r.report();
}

TEST(Diagnoses, AnUntransposedBIsCalledOut) {
  const auto r = check_wrong_product(ProductMistake::untransposed, 5, 12, 12);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("B stored as depth x n")) << r.report();
}

TEST(Diagnoses, AScaleFromTheLargestValueNotMagnitudeIsCalledOut) {
  const std::vector<float> x = {0.5f, -4.0f, 1.0f, 2.0f};
  const auto r = lab04::oracle::check_symmetric_scale(x, 2.0f / 127.0f);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("took the largest x, not the largest |x|")) << r.report();
}

}  // namespace
