// Lab 06's catalogue of mistakes (labs/06_cuda_normalize/tests/normalize_mistakes.hpp), proved on
// the CPU: each mistake's output is computed in float32 as the buggy kernel computes it (the same
// formula, sums in a plain loop), checked with the lab's own check, and the check must name that
// mistake. Plain C++, so that it runs where CUDA is not (CI); the buggy kernels themselves are in
// ../mistakes/, run on a GPU by lab06.mistake.*.
#include "normalize.hpp"
#include "normalize_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <gmock/gmock.h>

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <vector>

namespace {

using workbook::CheckResult;
using workbook::GuardedBuffer;
using workbook::Vector;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// What a buggy kernel does with one row v of `cols` elements, in float32: its statistics, then y.
// The knobs are the places where the formula goes wrong.
struct Formula {
  std::optional<float> mean_divisor;  ///< default: cols
  std::optional<float> var_divisor;   ///< default: cols
  enum class Eps { inside, none, on_std } eps = Eps::inside;
  bool square_root = true;
  bool centre = true;
  bool sum_of_squares = false;  ///< var = sum(x^2) / n - mean^2
  /// Sums as a block of 256 threads forms them (each thread a strided share, then a tree), and
  /// sum(x^2) / n - mean^2 as one fused multiply-add, as nvcc contracts it.
  bool block_order = false;
};

// The sum of f(v[c]) over a row: in order, or as a block of 256 threads forms it.
template <class F>
float row_sum(std::span<const float> v, bool block_order, F f) {
  float sum = 0;
  if (!block_order) {
    for (float e : v) sum += f(e);
    return sum;
  }
  float partial[256] = {};
  for (std::size_t c = 0; c < v.size(); ++c) partial[c % 256] += f(v[c]);
  for (std::size_t half = 128; half > 0; half /= 2)
    for (std::size_t t = 0; t < half; ++t) partial[t] += partial[t + half];
  return partial[0];
}

void normalize_row(std::span<const float> v, std::span<float> y, float eps, const Formula& f) {
  const float n = float(v.size());
  const float sum = row_sum(v, f.block_order, [](float e) { return e; });
  const float sum_x2 = row_sum(v, f.block_order, [](float e) { return e * e; });
  const float mean = sum / f.mean_divisor.value_or(n);
  float var = 0;
  if (f.sum_of_squares) {
    var = f.block_order ? std::fma(-mean, mean, sum_x2 / n) : sum_x2 / n - mean * mean;
  } else {
    for (float e : v) var += (e - mean) * (e - mean);
    var /= f.var_divisor.value_or(n);
  }
  float scale = 0;
  switch (f.eps) {
    case Formula::Eps::inside:
      scale = f.square_root ? 1 / std::sqrt(var + eps) : 1 / (var + eps);
      break;
    case Formula::Eps::none:
      scale = 1 / std::sqrt(var);
      break;
    case Formula::Eps::on_std:
      scale = 1 / (std::sqrt(var) + eps);
      break;
  }
  for (std::size_t c = 0; c < v.size(); ++c) y[c] = (f.centre ? v[c] - mean : v[c]) * scale;
}

// Every row of x (rows x cols) through the formula, into a poisoned output.
GuardedBuffer<float> normalize_rows(const Vector& x, std::size_t rows, std::size_t cols, float eps,
                                    const Formula& f = {}) {
  GuardedBuffer<float> y(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    normalize_row(workbook::as_span(x).subspan(r * cols, cols), y.span().subspan(r * cols, cols),
                  eps, f);
  return y;
}

CheckResult check(const Vector& x, std::size_t rows, std::size_t cols, float eps,
                  const GuardedBuffer<float>& y, std::function<void()> run_again = {}) {
  return lab06::oracle::check_normalize(workbook::as_span(x), rows, cols, eps, y,
                                        std::move(run_again));
}

Vector matrix(std::size_t rows, std::size_t cols, double mean = 0, double stddev = 1) {
  auto rng = workbook::testing::rng();
  return workbook::normal(rows * cols, rng, mean, stddev);
}

// A failing check names `what`, and speaks only of what a CUDA kernel does.
void expect_named(const CheckResult& result, const std::string& what) {
  ASSERT_FALSE(result.ok) << "the mistake passed the check";
  EXPECT_EQ(result.mistake, what) << result.report();
  EXPECT_THAT(result.report(), testing::HasSubstr("your output matches " + what));
  const std::regex foreign("SIMD|[Bb]atch|[^a-z]lanes?[^a-z]|tail loop");
  EXPECT_FALSE(std::regex_search(result.report(), foreign)) << result.report();
}

TEST(NormalizeMistakes, TheRightFormulaInFloat32Passes) {
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{3, 1}, {5, 128}, {16, 256}}) {
    const Vector x = matrix(rows, cols, 0.5, 2.0);
    EXPECT_CORRECT(check(x, rows, cols, lab06::kEps, normalize_rows(x, rows, cols, lab06::kEps)));
  }
}

TEST(NormalizeMistakes, VarianceOverColsMinusOne) {
  const Vector x = matrix(5, 128, 0.5, 2.0);
  expect_named(
      check(x, 5, 128, lab06::kEps, normalize_rows(x, 5, 128, lab06::kEps, {.var_divisor = 127})),
      "the variance divided by cols - 1");
}

TEST(NormalizeMistakes, RowsOfOneElementGiveNaN) {
  // With one column, cols - 1 = 0 and var = 0: both the wrong divisor and a missing eps give 0 / 0.
  const Vector x = matrix(3, 1);
  const char* what = "NaN in rows of one element (a division by zero)";
  expect_named(
      check(x, 3, 1, lab06::kEps, normalize_rows(x, 3, 1, lab06::kEps, {.var_divisor = 0.0f})),
      what);
  expect_named(check(x, 3, 1, lab06::kEps,
                     normalize_rows(x, 3, 1, lab06::kEps, {.eps = Formula::Eps::none})),
               what);
}

TEST(NormalizeMistakes, EpsMissingOrOnTheStandardDeviation) {
  // The visible test EpsIsAddedToTheVariance: var = 1e-4, eps = 1e-3 dominates it.
  const Vector x = matrix(16, 256, 0.0, 0.01);
  expect_named(
      check(x, 16, 256, 1e-3f, normalize_rows(x, 16, 256, 1e-3f, {.eps = Formula::Eps::none})),
      "no eps: (x - mean) / sqrt(var)");
  expect_named(
      check(x, 16, 256, 1e-3f, normalize_rows(x, 16, 256, 1e-3f, {.eps = Formula::Eps::on_std})),
      "eps added to the standard deviation: (x - mean) / (sqrt(var) + eps)");
}

TEST(NormalizeMistakes, NoSquareRootAndNoCentring) {
  const Vector x = matrix(5, 128, 0.5, 2.0);
  expect_named(
      check(x, 5, 128, lab06::kEps, normalize_rows(x, 5, 128, lab06::kEps, {.square_root = false})),
      "(x - mean) / (var + eps): the square root left out");
  expect_named(
      check(x, 5, 128, lab06::kEps, normalize_rows(x, 5, 128, lab06::kEps, {.centre = false})),
      "x / sqrt(var + eps): the mean not subtracted");
}

TEST(NormalizeMistakes, SumsDividedByTheThreads) {
  for (std::size_t cols : {1, 1000}) {
    const Vector x = matrix(3, cols);
    expect_named(
        check(x, 3, cols, lab06::kEps,
              normalize_rows(x, 3, cols, lab06::kEps, {.mean_divisor = 256, .var_divisor = 256})),
        "the sums divided by the number of threads (256), not by cols");
  }
}

// `v += __shfl_down_sync(mask, v, offset)` for offset 16 ... 1 on a warp's 32 values: a thread
// whose source is past the warp gets its own value back.
std::array<float, 32> shuffle_down(std::array<float, 32> v) {
  for (std::size_t offset = 16; offset > 0; offset /= 2) {
    const std::array<float, 32> before = v;
    for (std::size_t t = 0; t < 32; ++t) v[t] += before[t + offset < 32 ? t + offset : t];
  }
  return v;
}

TEST(NormalizeMistakes, ShuffleDownTotalReadInEveryThread) {
  // A warp per row, thread t on columns t, t + 32, ...; each uses what __shfl_down_sync left it.
  for (std::size_t cols : {2, 33, 1000}) {
    const std::size_t rows = 3;
    const Vector x = matrix(rows, cols);
    GuardedBuffer<float> y(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
      const float* v = x.data() + r * cols;
      std::array<float, 32> sum{}, squares{};
      for (std::size_t c = 0; c < cols; ++c) sum[c % 32] += v[c];
      sum = shuffle_down(sum);
      std::array<float, 32> mean{};
      for (std::size_t t = 0; t < 32; ++t) mean[t] = sum[t] / float(cols);
      for (std::size_t c = 0; c < cols; ++c)
        squares[c % 32] += (v[c] - mean[c % 32]) * (v[c] - mean[c % 32]);
      squares = shuffle_down(squares);
      for (std::size_t c = 0; c < cols; ++c)
        y[r * cols + c] =
            (v[c] - mean[c % 32]) / std::sqrt(squares[c % 32] / float(cols) + lab06::kEps);
    }
    expect_named(check(x, rows, cols, lab06::kEps, y),
                 "the warp's sum read in every thread after __shfl_down_sync");
  }
}

TEST(NormalizeMistakes, StatisticsOverTheWrongElements) {
  const std::size_t rows = 16, cols = 256;
  const Vector x = matrix(rows, cols, 0.0, 0.01);
  // Rows and cols swapped: the matrix read as cols rows of `rows` elements.
  expect_named(check(x, rows, cols, 1e-3f, normalize_rows(x, cols, rows, 1e-3f)),
               "rows and cols swapped");
  // Each column's statistics.
  Vector transposed = x;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) transposed[c * rows + r] = x[r * cols + c];
  const GuardedBuffer<float> by_column = normalize_rows(transposed, cols, rows, 1e-3f);
  GuardedBuffer<float> y(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) y[r * cols + c] = by_column[c * rows + r];
  expect_named(check(x, rows, cols, 1e-3f, y), "the statistics of each column, not of each row");
  // The whole matrix as one row; with one column it is the only one of the three offered.
  expect_named(check(x, rows, cols, 1e-3f, normalize_rows(x, 1, rows * cols, 1e-3f)),
               "the statistics of the whole matrix, not of each row");
  const Vector column = matrix(3, 1);
  expect_named(check(column, 3, 1, lab06::kEps, normalize_rows(column, 1, 3, lab06::kEps)),
               "the statistics of the whole matrix, not of each row");
}

TEST(NormalizeMistakes, NaNSpreadToTheRowsOfItsBlock) {
  // NaNStaysInItsRow: a NaN in row 3 of 8; a block of four rows shares it with rows 0 to 2.
  const std::size_t rows = 8, cols = 5;
  Vector x = matrix(rows, cols);
  x[3 * cols + 2] = kNaN;
  GuardedBuffer<float> y = normalize_rows(x, rows, cols, lab06::kEps);
  for (std::size_t i = 0; i < 4 * cols; ++i) y[i] = kNaN;
  expect_named(check(x, rows, cols, lab06::kEps, y), "a NaN from one row in rows that hold none");
  // The whole matrix's statistics are NaN everywhere: that is the whole-matrix entry, not this one.
  expect_named(check(x, rows, cols, lab06::kEps, normalize_rows(x, 1, rows * cols, lab06::kEps)),
               "the statistics of the whole matrix, not of each row");
}

TEST(NormalizeMistakes, OnlyTheFirstColumnsWritten) {
  // A block of 256 threads, one column each: statistics from the first 256 columns (divided by
  // cols, as the formula says), and only those 256 stored.
  const std::size_t rows = 3, cols = 1000;
  const Vector x = matrix(rows, cols);
  GuardedBuffer<float> y(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    GuardedBuffer<float> part(256);
    normalize_row(workbook::as_span(x).subspan(r * cols, 256), part.span(), lab06::kEps,
                  {.mean_divisor = float(cols), .var_divisor = float(cols)});
    for (std::size_t c = 0; c < 256; ++c) y[r * cols + c] = part[c];
  }
  expect_named(check(x, rows, cols, lab06::kEps, y),
               "only the first 256 columns of each row written");
}

TEST(NormalizeMistakes, AGridThatStopsShort) {
  // MisalignedAndInPlace's 5 x 64 with n / 256 blocks of 256 threads: the last 64 never written.
  const std::size_t rows = 5, cols = 64;
  const Vector x = matrix(rows, cols);
  GuardedBuffer<float> y = normalize_rows(x, rows, cols, lab06::kEps);
  for (std::size_t i = 256; i < rows * cols; ++i) y[i] = workbook::Poison<float>::value();
  const CheckResult result = check(x, rows, cols, lab06::kEps, y);
  expect_named(result, "a grid that stops short of the end of the matrix");
  EXPECT_THAT(result.diagnosis, testing::HasSubstr("the last 1 of 5 rows were never written"));
}

TEST(NormalizeMistakes, SumOfSquaresAtALargeOffset) {
  // LargeOffsetNeedsAStableVariance: rows of 1e4 + N(0, 1). The float32 result depends on the
  // order of the sums; a plain loop is one order, the entry must recognise any.
  const char* what = "the variance computed as mean(x^2) - mean(x)^2";
  for (std::size_t cols : {32, 128}) {
    const Vector x = matrix(64, cols, 1e4, 1.0);
    for (bool block_order : {false, true})
      expect_named(check(x, 64, cols, lab06::kEps,
                         normalize_rows(x, 64, cols, lab06::kEps,
                                        {.sum_of_squares = true, .block_order = block_order})),
                   what);
  }
  // Rows of two nearly equal values (as EveryRowWidth's two columns can be): the same
  // cancellation, with the mean 100 and the spread 0.01.
  Vector pairs = matrix(64, 2, 100, 1);
  for (std::size_t r = 0; r < 64; ++r) pairs[2 * r + 1] = pairs[2 * r] * (1 + 0x1p-12f);
  expect_named(check(pairs, 64, 2, lab06::kEps,
                     normalize_rows(pairs, 64, 2, lab06::kEps, {.sum_of_squares = true})),
               what);
}

TEST(NormalizeMistakes, ALargeOffsetDoesNotMakeEveryWrongRowACancellation) {
  const Vector x = matrix(64, 32, 1e4, 1.0);
  expect_named(
      check(x, 64, 32, lab06::kEps, normalize_rows(x, 64, 32, lab06::kEps, {.centre = false})),
      "x / sqrt(var + eps): the mean not subtracted");
  GuardedBuffer<float> short_grid = normalize_rows(x, 64, 32, lab06::kEps);
  for (std::size_t i = 60 * 32; i < 64 * 32; ++i) short_grid[i] = workbook::Poison<float>::value();
  expect_named(check(x, 64, 32, lab06::kEps, short_grid),
               "a grid that stops short of the end of the matrix");
}

TEST(NormalizeMistakes, AnOutputThatChangesBetweenRunsIsARace) {
  const Vector x = matrix(3, 1000);
  GuardedBuffer<float> y = normalize_rows(x, 3, 1000, lab06::kEps);
  y[1500] += 0.5f;  // a partial sum read before another warp wrote it
  const CheckResult result = check(x, 3, 1000, lab06::kEps, y, [&] {
    y.poison();
    const GuardedBuffer<float> again = normalize_rows(x, 3, 1000, lab06::kEps);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = again[i];
    y[2500] -= 0.5f;  // another time, another element
  });
  ASSERT_FALSE(result.ok);
  EXPECT_TRUE(result.unstable) << result.report();
  EXPECT_THAT(result.diagnosis, testing::HasSubstr("compute-sanitizer --tool racecheck"));
  EXPECT_THAT(result.diagnosis, testing::Not(testing::HasSubstr("SIMD")));
}

TEST(NormalizeMistakes, AWrongElementWithNoKnownCauseIsNotGivenOne) {
  const Vector x = matrix(3, 1000);
  GuardedBuffer<float> y = normalize_rows(x, 3, 1000, lab06::kEps);
  y[1500] += 0.5f;
  const CheckResult result = check(x, 3, 1000, lab06::kEps, y);
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.mistake, "") << result.report();
  EXPECT_THAT(result.diagnosis, testing::HasSubstr("compute-sanitizer --tool racecheck"));
}

// The reductions of normalize_inference.hpp: a block of `threads` threads, thread t summing
// columns t, t + threads, ... in float32, then `combine` turning the partials into the total.
template <class Combine>
GuardedBuffer<float> block_reduced(const Vector& x, std::size_t rows, std::size_t cols,
                                   std::size_t threads, Combine combine) {
  GuardedBuffer<float> y(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* v = x.data() + r * cols;
    std::vector<float> partial(threads, 0.0f);
    for (std::size_t c = 0; c < cols; ++c) partial[c % threads] += v[c];
    const float mean = combine(partial) / float(cols);
    std::fill(partial.begin(), partial.end(), 0.0f);
    for (std::size_t c = 0; c < cols; ++c) partial[c % threads] += (v[c] - mean) * (v[c] - mean);
    const float var = combine(partial) / float(cols);
    for (std::size_t c = 0; c < cols; ++c)
      y[r * cols + c] = (v[c] - mean) / std::sqrt(var + lab06::kEps);
  }
  return y;
}

// The launch a GPU test would have observed (blockDim.x), for the lifetime of the object.
struct ObservedLaunch {
  explicit ObservedLaunch(std::size_t threads) {
    lab06::inference::observed_block_threads() = [threads] { return threads; };
  }
  ~ObservedLaunch() { lab06::inference::observed_block_threads() = nullptr; }
};

// The name of the mistake a failing check gives, and its report.
void expect_inferred(const CheckResult& result, const std::string& what,
                     const std::string& detail) {
  expect_named(result, what);
  EXPECT_THAT(result.report(), testing::HasSubstr(detail));
}

TEST(NormalizeInference, AHalvingTreeOverThreadsThatAreNotAPowerOfTwo) {
  // 192 threads: 192, 96, ..., 6, 3, 1: the third of the partials left at 3 never reaches s[0].
  const std::size_t rows = 3, cols = 1000;
  const Vector x = matrix(rows, cols, 0.5, 2.0);
  const ObservedLaunch launch(192);
  auto tree = [](std::vector<float> s) {
    for (std::size_t half = s.size() / 2; half > 0; half /= 2)
      for (std::size_t t = 0; t < half; ++t) s[t] += s[t + half];
    return s[0];
  };
  expect_inferred(
      check(x, rows, cols, lab06::kEps, block_reduced(x, rows, cols, 192, tree)),
      "the partial sums of threads 2, 5, 8, ..., 191 (every 3rd) of each block of 192 never "
      "reaching the total",
      "a halving tree over 192 threads (192, 96, 48, 24, 12, 6, 3, 1)");
}

TEST(NormalizeInference, AHalvingTreeOverTheWarpsTotals) {
  // 192 threads = 6 warps: warp totals, then 6, 3, 1: warps 2 and 5 are lost.
  const std::size_t rows = 4, cols = 4096;
  const Vector x = matrix(rows, cols, 0.5, 2.0);
  const ObservedLaunch launch(192);
  auto warps_tree = [](std::vector<float> s) {
    std::vector<float> warp(s.size() / 32, 0.0f);
    for (std::size_t t = 0; t < s.size(); ++t) warp[t / 32] += s[t];
    for (std::size_t half = warp.size() / 2; half > 0; half /= 2)
      for (std::size_t t = 0; t < half; ++t) warp[t] += warp[t + half];
    return warp[0];
  };
  expect_inferred(
      check(x, rows, cols, lab06::kEps, block_reduced(x, rows, cols, 192, warps_tree)),
      "the partial sums of threads 64-95 and 160-191 of each block of 192 never reaching the "
      "total",
      "your mean is the sum of 2752 of the row's 4096 elements divided by 4096");
}

TEST(NormalizeInference, PartialsOfWholeWarpsLeftOut) {
  // 256 threads, a tree that starts at half = 64: threads 128-255 never reach s[0].
  const std::size_t rows = 3, cols = 1000;
  const Vector x = matrix(rows, cols, 0.5, 2.0);
  const ObservedLaunch launch(256);
  auto short_tree = [](std::vector<float> s) {
    for (std::size_t half = 64; half > 0; half /= 2)
      for (std::size_t t = 0; t < half; ++t) s[t] += s[t + half];
    return s[0];
  };
  expect_inferred(
      check(x, rows, cols, lab06::kEps, block_reduced(x, rows, cols, 256, short_tree)),
      "the partial sums of threads 128-255 of each block of 256 never reaching the total",
      "your mean is the sum of 512 of the row's 1000 elements divided by 1000");
}

TEST(NormalizeInference, EverySumCountedTwice) {
  auto doubled = [](const std::vector<float>& s) {
    float total = 0;
    for (float v : s) total += v + v;  // a shuffle from offset 32: each lane adds itself first
    return total;
  };
  const char* what =
      "every sum counted twice (your mean is exactly 2x the row's, and your variance twice the "
      "spread about it)";
  for (std::size_t cols : {1, 1000}) {
    const Vector x = matrix(5, cols, 0.5, 2.0);
    expect_named(check(x, 5, cols, lab06::kEps, block_reduced(x, 5, cols, 256, doubled)), what);
  }
  // At 1024 columns that is also the sums divided by 512: the launch observed (256 threads) says
  // which.
  const Vector x = matrix(5, 1024, 0.5, 2.0);
  const ObservedLaunch launch(256);
  expect_named(check(x, 5, 1024, lab06::kEps, block_reduced(x, 5, 1024, 256, doubled)), what);
}

TEST(NormalizeInference, WelfordMergedWithoutItsDeltaTerm) {
  // Each of 128 threads a running (count, mean, M2) over its columns; merged without d^2 na nb / n.
  const std::size_t rows = 3, cols = 1000, threads = 128;
  const Vector x = matrix(rows, cols, 0.5, 2.0);
  GuardedBuffer<float> y(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* v = x.data() + r * cols;
    float count = 0, mean = 0, m2 = 0;
    for (std::size_t t = 0; t < threads; ++t) {
      float n = 0, m = 0, q = 0;
      for (std::size_t c = t; c < cols; c += threads) {
        n += 1;
        const float d = v[c] - m;
        m += d / n;
        q += d * (v[c] - m);
      }
      if (n == 0) continue;
      const float total = count + n;
      mean += (m - mean) * (n / total);
      m2 += q;  // the term d * d * count * n / total is missing
      count = total;
    }
    for (std::size_t c = 0; c < cols; ++c)
      y[r * cols + c] = (v[c] - mean) / std::sqrt(m2 / float(cols) + lab06::kEps);
  }
  expect_inferred(check(x, rows, cols, lab06::kEps, y),
                  "the variance without the spread between the partial means (Welford's merge "
                  "without its delta term)",
                  "within each thread's columns (blocks of 128 threads)");
}

TEST(NormalizeInference, OtherStatisticsAreReportedAsObserved) {
  // A mean 0.9x the row's and the right variance: no known reduction gives that; say what it is.
  const std::size_t rows = 4, cols = 512;
  const Vector x = matrix(rows, cols, 3.0, 1.0);
  GuardedBuffer<float> y(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* v = x.data() + r * cols;
    double sum = 0, squares = 0;
    for (std::size_t c = 0; c < cols; ++c) sum += v[c];
    const double mean = sum / double(cols);
    for (std::size_t c = 0; c < cols; ++c) squares += (v[c] - mean) * (v[c] - mean);
    const double s = std::sqrt(squares / double(cols) + lab06::kEps);
    for (std::size_t c = 0; c < cols; ++c) y[r * cols + c] = float((v[c] - 0.9 * mean) / s);
  }
  expect_inferred(check(x, rows, cols, lab06::kEps, y),
                  "rows normalized with statistics other than their own",
                  "in every row m' is 0.9x the row's mean");
}

TEST(NormalizeInference, StatisticsOfZeroAreTracedToAnIntegerDivision) {
  // inv_cols = 1 / cols in integers is 0: mean 0, variance 0, y = x / sqrt(eps).
  const std::size_t rows = 3, cols = 100;
  const Vector x = matrix(rows, cols);
  GuardedBuffer<float> y(rows * cols);
  for (std::size_t i = 0; i < rows * cols; ++i) y[i] = x[i] / std::sqrt(lab06::kEps);
  expect_inferred(check(x, rows, cols, lab06::kEps, y),
                  "rows normalized with statistics other than their own",
                  "1 / cols is 0 in integer arithmetic");
}

TEST(NormalizeInference, WarpsThatNeverReceiveTheBlocksTotal) {
  // Blocks of 256 threads (8 warps, thread t takes columns t, t + 256, ...): warp 0 adds the
  // warps' sums but never shares the total; warp w normalizes with the statistics of its own
  // columns.
  const std::size_t rows = 3, cols = 1000, threads = 256;
  const ObservedLaunch launch(threads);
  const Vector x = matrix(rows, cols);
  GuardedBuffer<float> y(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* v = x.data() + r * cols;
    for (std::size_t w = 0; w < threads / 32; ++w) {
      double sum = 0, n = 0, squares = 0;
      for (std::size_t c = 0; c < cols; ++c)
        if (c % threads / 32 == w) sum += v[c], n += 1;
      const double mean = w == 0 ? 0 : sum / n;  // warp 0 keeps the row's (computed below)
      double row_sum = 0;
      for (std::size_t c = 0; c < cols; ++c) row_sum += v[c];
      const double m = w == 0 ? row_sum / double(cols) : mean;
      for (std::size_t c = 0; c < cols; ++c)
        if (c % threads / 32 == w) squares += (v[c] - m) * (v[c] - m);
      const double s = std::sqrt(squares / n + lab06::kEps);
      for (std::size_t c = 0; c < cols; ++c)
        if (c % threads / 32 == w) y[r * cols + c] = float((v[c] - m) / s);
    }
  }
  expect_inferred(check(x, rows, cols, lab06::kEps, y),
                  "each warp normalizing with statistics of its own, not the row's",
                  "each warp of your blocks of 256 threads normalized its columns");
}

TEST(NormalizeMistakes, RowsWrittenInRuns) {
  // Blocks of 4 warps, a warp per row, row = blockIdx.x * blockDim.x + warp: rows 0-3, 128-131,
  // ... written, the rest never.
  const std::size_t rows = 1000, cols = 7;
  const Vector x = matrix(rows, cols);
  GuardedBuffer<float> y = normalize_rows(x, rows, cols, lab06::kEps);
  for (std::size_t i = 0; i < rows * cols; ++i)
    if (i / cols % 128 >= 4) y[i] = workbook::Poison<float>::value();
  const CheckResult result = check(x, rows, cols, lab06::kEps, y);
  expect_named(result, "rows written in runs of 4 every 128");
  EXPECT_THAT(result.diagnosis, testing::HasSubstr("the first row of block b is b * 128"));
}

}  // namespace
