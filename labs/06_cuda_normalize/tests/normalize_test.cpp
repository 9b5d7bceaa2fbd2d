// Lab 06 visible tests: normalize against a float64 oracle for every class of row width (one
// element; under, at and over a warp; a float4 tail; the widths of the perf tests; wider than one
// block holds in registers), one row and many, constant rows, large offsets, a NaN that must stay
// in its row, misaligned and in-place buffers. Each TEST is its own ctest test; without a GPU they
// skip. A test of several cases checks them all, then reports the most telling failure
// (workbook::testing::Cases): at one column every reduction looks alike.
#include "normalize.hpp"
#include "normalize_faults.hpp"
#include "normalize_launch.hpp"
#include "normalize_oracle.hpp"

#include <workbook/cuda/memory.hpp>
#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

// A kernel that faults is explained in this lab's terms (see normalize_faults.hpp).
[[maybe_unused]] const bool fault_meaning_added =
    workbook::cuda::add_fault_meaning(lab06::faults::meaning);

using workbook::as_span;
using workbook::cuda::DeviceOutput;
using workbook::cuda::to_device;
using workbook::testing::Cases;

// Normalizes `x` (rows x cols) on the GPU, x `x_shift` and y `y_shift` floats past a 256-byte
// boundary, and checks it. On a failure the check runs normalize once more on the same input: an
// output that changes is a race.
workbook::CheckResult run(const workbook::Vector& x, std::size_t rows, std::size_t cols,
                          float eps = lab06::kEps, std::size_t x_shift = 0,
                          std::size_t y_shift = 0) {
  const auto dx = to_device<float>(as_span(x), x_shift);
  DeviceOutput<float> y(rows * cols, y_shift);
  auto normalize = [&] { lab06::normalize(dx.data() + x_shift, y.data(), rows, cols, eps); };
  normalize();
  return lab06::oracle::check_normalize(as_span(x), rows, cols, eps, y.fetch(), [&] {
    y.poison();
    normalize();
    y.fetch();
  });
}

// "3 rows x 129 columns": a case as the reports name it.
std::string shape(std::size_t rows, std::size_t cols) {
  return std::to_string(rows) + " rows x " + std::to_string(cols) + " columns";
}

workbook::Vector normal_matrix(std::size_t rows, std::size_t cols, double mean = 0,
                               double stddev = 1) {
  auto rng = workbook::testing::rng();
  return workbook::normal(rows * cols, rng, mean, stddev);
}

TEST(Normalize, EveryRowWidth) {
  // 1 (a row is its own mean), under / at / over a warp of 32, float4 tails (cols % 4 != 0), the
  // perf tests' widths, and 20000: more than the reference keeps in registers.
  Cases cases(lab06::oracle::where(), "row width");
  for (std::size_t cols : {1, 2, 3, 4, 5, 31, 32, 33, 127, 128, 129, 1000, 1023, 1024, 1025, 4096,
                           8192, 8195, 20000}) {
    cases.next(shape(3, cols));
    const workbook::Vector x = normal_matrix(3, cols);
    cases.check(run(x, 3, cols));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Normalize, OneRowAndManyRows) {
  Cases cases(lab06::oracle::where(), "shape");
  for (std::size_t rows : {1, 2, 5, 1000, 4099})
    for (std::size_t cols : {7, 128, 1024}) {
      cases.next(shape(rows, cols));
      const workbook::Vector x = normal_matrix(rows, cols, 0.5, 2.0);
      cases.check(run(x, rows, cols));
    }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Normalize, LargeMatrices) {
  // More rows than the GPU runs at once, so that blocks (or a row loop) must cover them all.
  Cases cases(lab06::oracle::where(), "shape");
  for (auto [rows, cols] :
       {std::pair<std::size_t, std::size_t>{65536, 64}, {16384, 1024}, {1024, 4096}}) {
    cases.next(shape(rows, cols));
    const workbook::Vector x = normal_matrix(rows, cols);
    cases.check(run(x, rows, cols));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Normalize, ConstantRowsGiveZeros) {
  // N copies of 2.5 sum exactly in float32 (for N < 2^22), so any order of summation finds the mean
  // 2.5 exactly: every output must be exactly 0. A NaN here is 0 / 0: var + eps must be inside the
  // square root, and var may not come out negative.
  for (std::size_t cols : {1, 3, 32, 1000, 4096}) {
    workbook::Vector x = normal_matrix(4, cols);
    std::fill(x.begin(), x.begin() + cols, 2.5f);
    std::fill(x.begin() + 2 * cols, x.begin() + 3 * cols, 0.0f);
    const auto dx = to_device<float>(as_span(x));
    DeviceOutput<float> y(4 * cols);
    lab06::normalize(dx.data(), y.data(), 4, cols);
    const workbook::GuardedBuffer<float>& out = y.fetch();
    ASSERT_CORRECT(lab06::oracle::check_normalize(as_span(x), 4, cols, lab06::kEps, out,
                                                  [&] {
                                                    y.poison();
                                                    lab06::normalize(dx.data(), y.data(), 4, cols);
                                                    y.fetch();
                                                  }))
        << cols << " columns";
    for (std::size_t row : {0, 2})
      for (std::size_t c = 0; c < cols; ++c)
        ASSERT_EQ(out[row * cols + c], 0.0f)
            << "row " << row << " is constant, so y must be exactly 0 (column " << c << " of "
            << cols << ")";
  }
}

TEST(Normalize, LargeOffsetNeedsAStableVariance) {
  // Rows of 1e4 + N(0, 1). var = E[x^2] - E[x]^2 subtracts two numbers near 1e8, where float32
  // values are 8 apart: the difference is a multiple of 8, not 1 (or negative: NaN). Subtract the
  // mean first (two passes, or Welford's update), and the variance comes out right.
  for (std::size_t cols : {32, 128}) {
    const workbook::Vector x = normal_matrix(64, cols, 1e4, 1.0);
    ASSERT_CORRECT(run(x, 64, cols))
        << cols << " columns around 1e4. If the variance is wrong, compute it from "
        << "x - mean, not as mean(x^2) - mean(x)^2";
  }
}

TEST(Normalize, NaNStaysInItsRow) {
  // A NaN in row 3 makes that row's mean NaN, so all of row 3 is NaN (as in PyTorch); no other row
  // may change. A kernel that shares partial sums between rows spreads it.
  Cases cases(lab06::oracle::where(), "row width");
  for (std::size_t cols : {5, 64, 1024, 4096}) {
    cases.next("a NaN in row 3 of 8, " + std::to_string(cols) + " columns");
    workbook::Vector x = normal_matrix(8, cols);
    x[3 * cols + cols / 2] = std::numeric_limits<float>::quiet_NaN();
    cases.check(run(x, 8, cols));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Normalize, EpsIsAddedToTheVariance) {
  // Rows with a standard deviation of 0.01: var = 1e-4, and eps = 1e-3 dominates it.
  const workbook::Vector x = normal_matrix(16, 256, 0.0, 0.01);
  ASSERT_CORRECT(run(x, 16, 256, 1e-3f)) << "eps = 1e-3: y = (x - mean) / sqrt(var + eps)";
}

TEST(Normalize, MisalignedAndInPlace) {
  // float4 loads need 16-byte addresses: rows that start 1, 2 or 3 floats past one (cols % 4 != 0,
  // or shifted buffers) need another path.
  Cases cases(lab06::oracle::where(), "offset");
  for (std::size_t shift : {1, 2, 3})
    for (std::size_t cols : {64, 1024}) {
      const workbook::Vector x = normal_matrix(5, cols);
      cases.next(shape(5, cols) + ", x starts " + std::to_string(shift) +
                 " floats past a 16-byte boundary");
      cases.check(run(x, 5, cols, lab06::kEps, shift, 0));
      cases.next(shape(5, cols) + ", x and y start " + std::to_string(shift) + " floats past one");
      cases.check(run(x, 5, cols, lab06::kEps, shift, shift));
    }
  EXPECT_ALL_CORRECT(cases);
  for (std::size_t cols : {33, 1024, 8192}) {
    const workbook::Vector x = normal_matrix(6, cols);
    DeviceOutput<float> y(6 * cols);
    auto normalize_in_place = [&] {
      WORKBOOK_CUDA_CHECK(
          cudaMemcpy(y.data(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
      lab06::normalize(y.data(), y.data(), 6, cols);
    };
    normalize_in_place();
    ASSERT_CORRECT(lab06::oracle::check_normalize(as_span(x), 6, cols, lab06::kEps, y.fetch(),
                                                  [&] {
                                                    normalize_in_place();
                                                    y.fetch();
                                                  }))
        << "in place, " << cols << " columns";
  }
}

TEST(Normalize, EmptyMatricesWriteNothing) {
  DeviceOutput<float> y(0);
  lab06::normalize(nullptr, nullptr, 0, 128);
  lab06::normalize(y.data(), y.data(), 16, 0);
  const workbook::GuardedBuffer<float>& out = y.fetch();
  EXPECT_TRUE(out.damage().intact()) << "normalize wrote outside an empty matrix";
}

TEST(Normalize, RejectsBadArguments) {
  DeviceOutput<float> y(64);
  EXPECT_THROW(lab06::normalize(y.data(), y.data() + 1, 3, 21),
               std::invalid_argument);  // shifted overlap
  EXPECT_THROW(lab06::normalize(y.data(), y.data(), 2, 32, 0.0f), std::invalid_argument);
  EXPECT_THROW(lab06::normalize(nullptr, y.data(), 2, 32), std::invalid_argument);
}

}  // namespace
