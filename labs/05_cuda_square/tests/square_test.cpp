// Lab 05 Part A visible tests: square and square_2d against a float64 oracle, at every tail length,
// on misaligned starts, in place, at length zero, on huge and special values, and on a 2-D matrix
// whose row padding must stay untouched. Each TEST is its own ctest test; without a GPU they skip.
#include "square.hpp"
#include "square_faults.hpp"
#include "square_launch.hpp"
#include "square_oracle.hpp"

#include <workbook/cuda/memory.hpp>
#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <cmath>
#include <limits>
#include <span>
#include <vector>

namespace {

// A kernel that faults is explained in this lab's terms (see square_faults.hpp).
[[maybe_unused]] const bool fault_meaning_added =
    workbook::cuda::add_fault_meaning(lab05::faults::meaning);

using workbook::as_span;
using workbook::cuda::DeviceOutput;
using workbook::cuda::to_device;

// 0..67 covers every tail of a float4 loop and of a few blocks' worth of unrolled iterations; the
// large sizes need more threads than one wave of the GPU holds, so a grid-stride loop must loop.
std::vector<std::size_t> sizes() {
  std::vector<std::size_t> n;
  for (std::size_t i = 0; i <= 67; ++i) n.push_back(i);
  for (std::size_t i : {255, 256, 257, 1023, 1025, 4099, (1 << 20) + 13, (1 << 25) + 7})
    n.push_back(i);
  return n;
}

// Square n N(0, 1) values with x starting `x_shift` floats and y `y_shift` floats past a 256-byte
// boundary, and check every element and both guard zones. On a failure the check runs square once
// more (an output that changes is a race), and x is checked too (a kernel that wrote into x).
void expect_square(std::size_t n, std::size_t x_shift, std::size_t y_shift) {
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::normal(n, rng);
  const auto dx = to_device<float>(as_span(x), x_shift);
  DeviceOutput<float> y(n, y_shift);
  auto run = [&] { lab05::square(dx.data() + x_shift, y.data(), n); };
  run();
  const workbook::CheckResult result = lab05::oracle::check_square(as_span(x), y.fetch(), [&] {
    y.poison();
    run();
    y.fetch();
  });
  if (!result) {
    const std::vector<float> x_after = dx.to_host();
    EXPECT_CORRECT(lab05::oracle::check_x_unchanged(
        "square", as_span(x), std::span<const float>(x_after).subspan(x_shift)))
        << "n = " << n;
  }
  ASSERT_CORRECT(result) << "n = " << n << ", x starts " << x_shift << " and y " << y_shift
                         << " floats past a 16-byte boundary";
}

TEST(Square, MatchesOracleAtEverySize) {
  for (std::size_t n : sizes()) expect_square(n, 0, 0);
}

TEST(Square, MisalignedStarts) {
  // float4 loads need 16-byte addresses: x and y may start 1, 2 or 3 floats past one, and not
  // necessarily by the same amount.
  for (std::size_t xs = 0; xs < 4; ++xs)
    for (std::size_t ys = 0; ys < 4; ++ys)
      for (std::size_t n : {1, 3, 7, 1000, 4099}) expect_square(n, xs, ys);
}

TEST(Square, ZeroLengthWritesNothing) {
  DeviceOutput<float> y(0);
  lab05::square(nullptr, nullptr, 0);
  lab05::square(y.data(), y.data(), 0);
  EXPECT_CORRECT(lab05::oracle::check_square({}, y.fetch()));
}

TEST(Square, HugeAndSpecialValues) {
  // Squares past FLT_MAX (3.4e38) become +inf, NaN stays NaN, -0 gives +0, denormals stay exact
  // enough: torch.square's semantics.
  auto rng = workbook::testing::rng();
  workbook::Vector x = workbook::adversarial(4099, rng, workbook::Specials::all);
  for (std::size_t i = 0; i < 64; ++i) x[i] = (i % 2 ? -1 : 1) * float(1e19 * (i + 1));
  const auto dx = to_device<float>(as_span(x));
  DeviceOutput<float> y(x.size());
  lab05::square(dx.data(), y.data(), x.size());
  EXPECT_CORRECT(lab05::oracle::check_square(as_span(x), y.fetch()));
}

TEST(Square, InPlace) {
  // y == x, on a 16-byte boundary (where a float4 path runs) and 1 float past one.
  auto rng = workbook::testing::rng();
  for (std::size_t n : {5, 1027, (1 << 20) + 1})
    for (std::size_t shift : {0, 1}) {
      const workbook::Vector x = workbook::normal(n, rng);
      DeviceOutput<float> y(n, shift);
      // Put x into y's place on the device (the guard zones stay), then square it there.
      auto run = [&] {
        WORKBOOK_CUDA_CHECK(
            cudaMemcpy(y.data(), x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        lab05::square(y.data(), y.data(), n);
      };
      run();
      ASSERT_CORRECT(lab05::oracle::check_square(as_span(x), y.fetch(),
                                                 [&] {
                                                   y.poison();
                                                   run();
                                                   y.fetch();
                                                 }))
          << "in place, n = " << n << ", " << shift << " floats past a 16-byte boundary";
    }
}

TEST(Square, RejectsBadArguments) {
  DeviceOutput<float> y(16);
  EXPECT_THROW(lab05::square(nullptr, y.data(), 16), std::invalid_argument);
  EXPECT_THROW(lab05::square(y.data(), y.data() + 1, 15),
               std::invalid_argument);  // overlap, shifted
}

// --- 2-D
// -------------------------------------------------------------------------------------------

// A rows x cols matrix in rows ld_x apart, squared into one with rows ld_y apart.
void expect_square_2d(std::size_t rows, std::size_t cols, std::size_t ld_x, std::size_t ld_y) {
  auto rng = workbook::testing::rng();
  const std::size_t x_size = rows == 0 ? 0 : (rows - 1) * ld_x + cols,
                    y_size = rows == 0 ? 0 : (rows - 1) * ld_y + cols;
  const workbook::Vector x = workbook::normal(x_size, rng);
  const auto dx = to_device<float>(as_span(x));
  DeviceOutput<float> y(y_size);
  auto run = [&] { lab05::square_2d(dx.data(), ld_x, y.data(), ld_y, rows, cols); };
  run();
  if (rows == 0 ||
      cols == 0) {  // nothing to square: every element keeps its poison, no guard is hit
    const workbook::GuardedBuffer<float>& out = y.fetch();
    for (std::size_t i = 0; i < out.size(); ++i)
      ASSERT_TRUE(out.is_poison(i)) << "square_2d wrote element " << i << " of an empty matrix";
    ASSERT_TRUE(out.damage().intact()) << "square_2d wrote outside an empty matrix";
    return;
  }
  ASSERT_CORRECT(lab05::oracle::check_square_2d(as_span(x), ld_x, y.fetch(), ld_y, rows, cols,
                                                [&] {
                                                  y.poison();
                                                  run();
                                                  y.fetch();
                                                }))
      << rows << " x " << cols << ", ld_x = " << ld_x << ", ld_y = " << ld_y;
}

TEST(Square2d, ContiguousMatchesOracle) {
  for (std::size_t rows : {1, 2, 5, 33})
    for (std::size_t cols : {1, 3, 4, 31, 257}) expect_square_2d(rows, cols, cols, cols);
}

TEST(Square2d, StridedRowsLeaveThePaddingAlone) {
  for (std::size_t cols = 1; cols <= 9; ++cols) expect_square_2d(7, cols, cols + 3, cols + 1);
  expect_square_2d(1823, 781, 784, 800);  // the seed's odd shape, rows padded to other widths
  expect_square_2d(64, 1000, 1024, 1001);
}

TEST(Square2d, EmptyMatricesWriteNothing) {
  expect_square_2d(0, 5, 5, 5);
  expect_square_2d(5, 0, 3, 3);
}

TEST(Square2d, RejectsBadArguments) {
  DeviceOutput<float> y(64);
  EXPECT_THROW(lab05::square_2d(y.data(), 3, y.data(), 3, 2, 4),
               std::invalid_argument);  // ld < cols
  EXPECT_THROW(lab05::square_2d(y.data(), 8, y.data(), 9, 2, 4),
               std::invalid_argument);  // in place, two lds
}

}  // namespace
