// Lab 06 hidden tests, sealed: normalize runs in a worker process that holds the student's code, on
// device copies of the buffers this checker fills (the worker copies them to the GPU and back); the
// inputs, the oracle and the verdict stay here. Beyond the visible tests they check shapes the
// visible tests do not use (rows wider than a block's share, more rows than a wave of the GPU),
// special rows, an input the kernel cannot have modified (the device copy of x comes back too), no
// write outside y in device memory, and no result kept from one call to the next.
#include "normalize.hpp"
#include "normalize_oracle.hpp"

#include <grade/sealed.hpp>

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <limits>
#include <vector>

namespace {

using workbook::sealed::input;
using workbook::sealed::output;
using workbook::sealed::Region;
using workbook::sealed::Worker;

std::vector<float> values(const workbook::Vector& v) {
  return {v.begin(), v.end()};
}

void put(Region<float>& r, const std::vector<float>& v) {
  std::copy(v.begin(), v.end(), r.data());
}

// Normalizes `x` (rows x cols) in the worker, x and y `x_shift` and `y_shift` floats past a 16-byte
// boundary on the device, and checks it here.
::testing::AssertionResult normalized(Worker& worker, const std::vector<float>& x, std::size_t rows,
                                      std::size_t cols, std::size_t x_shift, std::size_t y_shift,
                                      float eps = lab06::kEps) {
  worker.reset();
  Region<float> xr = worker.alloc<float>(x.size()), yr = worker.alloc<float>(x.size());
  put(xr, x);
  const auto reply = worker.call("normalize", {input(xr, "x"), output(yr, "y"), rows, cols,
                                               static_cast<double>(eps), x_shift, y_shift});
  if (!reply.ok) return workbook::sealed::succeeded(reply);
  return workbook::testing::correct(lab06::oracle::check_normalize(x, rows, cols, eps, yr.copy()));
}

std::vector<float> normal_matrix(std::size_t rows, std::size_t cols, double mean = 0,
                                 double stddev = 1) {
  auto rng = workbook::testing::rng();
  return values(workbook::normal(rows * cols, rng, mean, stddev));
}

struct Shape {
  std::size_t rows, cols;
};

TEST(Normalize, MatchesOracle) {
  // One element; rows shorter than a warp, one float4 past it, wider than a block's share of a row
  // (a block must loop over its row), odd widths that misalign every other row; more rows than the
  // GPU runs blocks at once.
  const Shape shapes[] = {{1, 1},     {1, 7},     {3, 33},     {5, 1000},  {7, 1025},
                          {2, 20011}, {4096, 37}, {333, 4099}, {65539, 65}};
  Worker worker;
  for (const Shape& s : shapes)
    ASSERT_TRUE(normalized(worker, normal_matrix(s.rows, s.cols, 0.25, 3.0), s.rows, s.cols,
                           s.cols % 4, s.rows % 4))
        << s.rows << " rows x " << s.cols << " columns";
}

TEST(Normalize, SpecialRows) {
  // Constant rows (exact zeros), a NaN and an infinity that stay in their rows, rows far from zero
  // (a variance from E[x^2] - E[x]^2 cancels), and rows of tiny spread where eps dominates.
  const std::size_t rows = 12, cols = 777;
  std::vector<float> x = normal_matrix(rows, cols);
  std::fill(x.begin(), x.begin() + cols, -3.5f);
  x[2 * cols + 5] = std::numeric_limits<float>::quiet_NaN();
  x[4 * cols + cols - 1] = std::numeric_limits<float>::infinity();
  for (std::size_t c = 0; c < cols; ++c) {
    x[6 * cols + c] = 2e4f + x[6 * cols + c];
    x[8 * cols + c] = 1e-3f * x[8 * cols + c];
  }
  Worker worker;
  EXPECT_TRUE(normalized(worker, x, rows, cols, 1, 2));
  EXPECT_TRUE(normalized(worker, x, rows, cols, 0, 0, 1e-2f)) << "eps = 1e-2";
}

TEST(Normalize, InPlace) {
  Worker worker;
  for (const Shape& s : {Shape{9, 4099}, Shape{1000, 256}}) {
    worker.reset();
    const std::vector<float> x = normal_matrix(s.rows, s.cols);
    Region<float> xy = worker.alloc<float>(x.size());
    put(xy, x);
    ASSERT_CALL(worker.call("normalize", {input(xy, "x"), input(xy, "y (the same buffer)"), s.rows,
                                          s.cols, static_cast<double>(lab06::kEps), 1, 1}));
    ASSERT_CORRECT(lab06::oracle::check_normalize(x, s.rows, s.cols, lab06::kEps, xy.copy()))
        << "in place, " << s.rows << " rows x " << s.cols << " columns";
  }
}

TEST(Normalize, LeavesInputUnchanged) {
  Worker worker;
  const std::size_t rows = 513, cols = 1029;
  const std::vector<float> x = normal_matrix(rows, cols, -1.0, 0.5);
  Region<float> xr = worker.alloc<float>(x.size()), yr = worker.alloc<float>(x.size());
  put(xr, x);
  ASSERT_CALL(worker.call("normalize", {input(xr, "x"), output(yr, "y"), rows, cols,
                                        static_cast<double>(lab06::kEps), 0, 3}));
  EXPECT_CORRECT(workbook::check_unchanged(x, xr.span(), lab06::oracle::where(), "x"));
  EXPECT_CORRECT(lab06::oracle::check_normalize(x, rows, cols, lab06::kEps, yr.copy()));
}

TEST(Normalize, FreshResultsEachCall) {
  Worker worker;
  const std::size_t rows = 256, cols = 300;
  Region<float> xr = worker.alloc<float>(rows * cols), yr = worker.alloc<float>(rows * cols);
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> x = normal_matrix(rows, cols, round, 1.0 + round);
    put(xr, x);
    ASSERT_CALL(worker.call("normalize", {input(xr, "x"), output(yr, "y"), rows, cols,
                                          static_cast<double>(lab06::kEps), 2, 2}));
    ASSERT_CORRECT(lab06::oracle::check_normalize(x, rows, cols, lab06::kEps, yr.copy()))
        << "call " << round + 1
        << " on the same device buffers with new values: a result kept from an earlier call?";
  }
}

}  // namespace
