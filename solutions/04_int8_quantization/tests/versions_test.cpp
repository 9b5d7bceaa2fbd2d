// Every numbered version of lab 04 is correct: they differ only in speed. (The catalogue of
// mistakes is tried on deliberately wrong kernels in mistakes_test.cpp.)
#include "versions.hpp"
#include "quantize.hpp"
#include "quantize_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

using workbook::as_span;
using workbook::GuardedBuffer;
using Int8Vector = xt::xtensor<std::int8_t, 1>;
namespace v = lab04::versions;

const std::vector<std::pair<const char*, v::Product*>> kProducts = {
    {"v1", v::matmul_v1_scalar},
    {"v2", v::matmul_v2_autovectorized},
    {"v3", v::matmul_v3_vpdpbusd_rows},
    {"v4", v::matmul_v4_packed_avx2},
    {"v4b", v::matmul_v4b_packed_avx_vnni},
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

TEST(Versions, EveryProductVersionRejectsMinus128BeforeWritingC) {
  // The packed versions look for a -128 while they copy A and B (int8_gemm.hpp), so each place a
  // copy reads bytes is tried: B's bytes transposed 16 groups at a time and those left to the
  // word-by-word loop (depth 131: groups 0-31, then 32 with its 3 bytes), a partial panel of B,
  // A's first row and the last row of its last, partial tile.
  auto rng = workbook::testing::rng();
  const std::size_t m = 13, n = 70, depth = 131;
  const Int8Vector a = workbook::int8_uniform(m * depth, rng),
                   b = workbook::int8_uniform(n * depth, rng);
  const std::vector<std::pair<char, std::size_t>> places = {{'a', 0},
                                                            {'a', 5 * depth + 77},
                                                            {'a', m * depth - 1},
                                                            {'b', 0},
                                                            {'b', 63},
                                                            {'b', 3 * depth + 127},
                                                            {'b', 17 * depth + 129},
                                                            {'b', 66 * depth + 40},
                                                            {'b', n * depth - 1}};
  auto products = kProducts;
  products.emplace_back("the reference", lab04::matmul_int8);
  constexpr std::int32_t kUntouched = 0x5A5A5A5A;
  for (auto [name, product] : products)
    for (auto [operand, at] : places) {
      Int8Vector bad_a = a, bad_b = b;
      (operand == 'a' ? bad_a : bad_b)(at) = -128;
      std::vector<std::int32_t> c(m * n, kUntouched);
      const std::string element = std::string(1, operand) + "[" + std::to_string(at) + "]";
      try {
        product(as_span(bad_a), as_span(bad_b), c, m, n, depth);
        ADD_FAILURE() << name << " accepted " << element << " = -128";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(element), std::string::npos)
            << name << ": \"" << e.what() << "\" does not name " << element;
      }
      EXPECT_EQ(std::count(c.begin(), c.end(), kUntouched), static_cast<std::ptrdiff_t>(c.size()))
          << name << " wrote C before rejecting " << element;
    }
  // quantized_matmul's product goes through the same copies.
  const std::vector<float> scale = {0.5f};
  Int8Vector bad_b = b;
  bad_b(3 * depth + 127) = -128;
  std::vector<float> c(m * n, 7.0f);
  EXPECT_THROW(
      lab04::quantized_matmul({as_span(a), scale, m, depth}, {as_span(bad_b), scale, n, depth}, c),
      std::invalid_argument);
  EXPECT_EQ(std::count(c.begin(), c.end(), 7.0f), static_cast<std::ptrdiff_t>(c.size()));
}

TEST(Versions, EveryProductVersionReadsOnlyItsRows) {
  // The kernels read A from a copy padded to whole tiles, which ends with the last tile's last row:
  // a kernel that reads past it reads past the allocation (at the largest depth, a row of A past
  // the copy lies far beyond it). Alone this checks the product; lab04.versions.memcheck runs it
  // under valgrind, which flags such a read (GCC 12 made one of the portable kernel's, see
  // int8_gemm.hpp).
  auto rng = workbook::testing::rng();
  const std::size_t m = 4, n = 16, depth = lab04::kMaxDepth;
  const Int8Vector a = workbook::int8_uniform(m * depth, rng),
                   b = workbook::int8_uniform(n * depth, rng);
  const auto want = lab04::oracle::product(as_span(a), as_span(b), m, n, depth);
  auto products = kProducts;
  products.emplace_back("the reference", lab04::matmul_int8);
  for (auto [name, product] : products) {
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

}  // namespace
