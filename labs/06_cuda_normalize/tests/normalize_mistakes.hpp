#pragma once
// The mistakes students make in lab 06's normalize, each with the wrong answer it gives, computed
// in float64 like the oracle. When a check fails, check_elementwise compares the output with each
// entry, in this order, and names the first that matches (within twice the check's own bound):
// "your output matches the variance divided by cols - 1: ...". Most entries are a wrong formula,
// computed exactly. A few are recognised from the output itself, because what they write depends
// on the order of float32 operations (the sum-of-squares variance), on which rows share a block
// (a NaN that spreads), or on how far the grid reached: their answer is the wrong formula's
// answer nearest to what the kernel wrote, when one exists, and the exact answer otherwise.
#include "normalize_inference.hpp"

#include <workbook/buffer.hpp>
#include <workbook/check.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace lab06::mistakes {

/// The mean and the population variance of some elements of x, in float64 (two passes); NaN when
/// one of them is not finite.
struct Moments {
  double mean = 0, var = 0;
};

/// The moments of x[index(k)] for k < count.
template <class Index>
Moments moments(std::span<const float> x, std::size_t count, Index index) {
  double sum = 0;
  for (std::size_t k = 0; k < count; ++k) sum += x[index(k)];
  if (!std::isfinite(sum)) return {std::nan(""), std::nan("")};
  const double mean = sum / double(count);
  double squares = 0;
  for (std::size_t k = 0; k < count; ++k) squares += (x[index(k)] - mean) * (x[index(k)] - mean);
  return {mean, squares / double(count)};
}

/// The moments of every row of x (rows of `cols`).
inline std::vector<Moments> row_moments(std::span<const float> x, std::size_t rows,
                                        std::size_t cols) {
  std::vector<Moments> m(rows);
  for (std::size_t r = 0; r < rows; ++r)
    m[r] = moments(x, cols, [=](std::size_t c) { return r * cols + c; });
  return m;
}

/// (x - mean) / sqrt(var + eps): what the right formula gives with statistics `m`.
inline double normalized(double x, const Moments& m, double eps) {
  return (x - m.mean) / std::sqrt(m.var + eps);
}

/// What one catalogue needs to know about a failed check: the input, its shape, eps, and the
/// output the kernel wrote (some entries are recognised from it).
struct Failure {
  std::span<const float> x;
  std::size_t rows = 0, cols = 0;
  double eps = 0;
  const workbook::GuardedBuffer<float>* y = nullptr;
};

namespace detail {

constexpr double u = 0x1p-24;
inline double gamma(double k) {
  return k * u / (1 - k * u);
}

// What each of a warp's 32 threads holds after `v += __shfl_down_sync(mask, v, offset)` for offset
// 16, 8, 4, 2, 1, when thread t starts with the sum of term(t, c) over its columns c = t, t + 32,
// ... < cols. A thread whose source t + offset is past the warp gets its own value back (it adds
// it to itself); only thread 0 ends with the whole sum.
template <class Term>
std::array<double, 32> shuffle_down_sums(Term term, std::size_t cols) {
  std::array<double, 32> v{};
  for (std::size_t t = 0; t < 32; ++t)
    for (std::size_t c = t; c < cols; c += 32) v[t] += term(t, c);
  for (std::size_t offset = 16; offset > 0; offset /= 2) {
    const std::array<double, 32> before = v;
    for (std::size_t t = 0; t < 32; ++t) v[t] += before[t + offset < 32 ? t + offset : t];
  }
  return v;
}

// An entry whose answer is the right formula applied with other statistics: stats_of(i) gives the
// statistics element i is normalized with (a row's, a column's, the whole matrix's, ...).
inline workbook::Mistake with_stats(std::string what, std::string advice, std::span<const float> x,
                                    double eps, std::function<Moments(std::size_t)> stats_of) {
  return {std::move(what), std::move(advice),
          [=](std::size_t i) { return normalized(x[i], stats_of(i), eps); }};
}

// The sum-of-squares variance, mean(x^2) - mean(x)^2, in float32: its error in a row is bounded by
// what the two float32 sums and the subtraction can lose (below), and that is far more than the
// variance itself when |mean| >> the spread (rows of 1e4 + N(0, 1), 32 columns: the bound is about
// 2400, var is 1). What it writes depends on the order of the sums, so the answer is recognised
// from the output: each row of y a line in x, centred on the row's mean (within the float32 mean's
// error delta), with a slope 1 / sqrt(var' + eps) whose var' is within that bound of the variance;
// or all NaN, when var' + eps can come out negative. A row not of that form answers the exact
// result.
inline workbook::Mistake sum_of_squares(const Failure& f, std::shared_ptr<std::vector<Moments>> m) {
  enum class Fit { exact, line, nan };
  struct Row {
    Fit fit = Fit::exact;
    double slope = 0, intercept = 0;
  };
  auto fits = std::make_shared<std::vector<Row>>(f.rows);
  const workbook::GuardedBuffer<float>& y = *f.y;
  const double n = double(f.cols);
  for (std::size_t r = 0; r < f.rows; ++r) {
    const Moments& s = (*m)[r];
    if (!std::isfinite(s.mean)) continue;
    double largest = 0;
    for (std::size_t c = 0; c < f.cols; ++c)
      largest = std::max(largest, std::fabs(double(f.x[r * f.cols + c])));
    // The float32 mean is within delta of the mean (the oracle's bound); mean'^2 and the sum of
    // squares divided by n are then within the error below of mean^2 and mean(x^2).
    const double delta = gamma(2 * n + 2) * largest;
    const double mean_x2 = s.mean * s.mean + s.var;
    const double error = 2 * (gamma(n + 3) * (mean_x2 + s.mean * s.mean) +
                              2 * std::fabs(s.mean) * delta + delta * delta);
    std::size_t nans = 0;
    double sxy = 0, sxx = 0, sy = 0;
    bool written = true;
    for (std::size_t c = 0; c < f.cols; ++c) {
      const std::size_t i = r * f.cols + c;
      if (y.is_poison(i)) written = false;
      const double g = y[i], d = f.x[i] - s.mean;
      if (std::isnan(g)) {
        ++nans;
        continue;
      }
      sxy += g * d, sxx += d * d, sy += g;
    }
    Row& fit = (*fits)[r];
    if (!written) continue;
    if (nans == f.cols) {
      if (s.var + f.eps <= error) fit.fit = Fit::nan;  // var' + eps < 0: rsqrt gives NaN
      continue;
    }
    if (nans > 0 || sxx == 0) continue;
    const double slope = sxy / sxx, intercept = sy / n;
    if (!(slope > 0)) continue;
    const double var = 1 / (slope * slope) - f.eps;
    if (std::fabs(var - s.var) <= error && std::fabs(intercept) <= 2 * slope * delta)
      fit = {Fit::line, slope, intercept};
  }
  const Failure at = f;
  return {"the variance computed as mean(x^2) - mean(x)^2",
          "that formula subtracts two large, nearly equal numbers when the row's mean is large "
          "against its spread (catastrophic cancellation): in float32 the difference is mostly "
          "rounding error, so y is scaled wrongly, or NaN where it came out negative. Subtract "
          "the mean first: var = sum((x - mean)^2) / cols (a second pass over the row, or "
          "Welford's update; see the handout, section 2).",
          [at, m, fits](std::size_t i) {
            const std::size_t r = i / at.cols;
            const Row& fit = (*fits)[r];
            if (fit.fit == Fit::nan) return std::nan("");
            if (fit.fit == Fit::line) return fit.slope * (at.x[i] - (*m)[r].mean) + fit.intercept;
            return normalized(at.x[i], (*m)[r], at.eps);
          }};
}

}  // namespace detail

/// The catalogue for one failed check of normalize, most specific first. Entries that coincide
/// with another on a degenerate shape (one row, one column) are left out or merged there.
inline std::vector<workbook::Mistake> normalize_mistakes(const Failure& f) {
  using workbook::Mistake;
  const std::size_t rows = f.rows, cols = f.cols;
  const std::span<const float> x = f.x;
  const double eps = f.eps;
  const auto m = std::make_shared<std::vector<Moments>>(row_moments(x, rows, cols));
  auto row = [m, cols](std::size_t i) -> const Moments& { return (*m)[i / cols]; };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Mistake> list;

  // The variance and eps: a division by zero, the wrong divisor, eps in the wrong place.
  if (cols == 1) {
    list.push_back(
        {"NaN in rows of one element (a division by zero)",
         "a row of one element is its own mean, so x - mean = 0, var = 0, and y = 0 / sqrt(0 + "
         "eps) = 0. A NaN there is 0 / 0: the variance divided by cols - 1 (= 0), or eps missing "
         "from sqrt(var + eps). Divide by cols, and add eps inside the square root.",
         [nan](std::size_t) { return nan; }});
  } else {
    list.push_back(
        {"the variance divided by cols - 1",
         "that is the sample variance (torch.var's default, numpy's ddof=1); layer_norm uses the "
         "population variance, sum((x - mean)^2) / cols. Divide by cols.",
         [=](std::size_t i) {
           const Moments& s = row(i);
           const double n = double(cols);
           return (x[i] - s.mean) / std::sqrt(s.var * n / (n - 1) + eps);
         }});
    list.push_back(
        {"no eps: (x - mean) / sqrt(var)",
         "eps keeps a row of (nearly) equal values from dividing by (nearly) zero, and "
         "changes every result when var is small. Compute 1 / sqrt(var + eps) (rsqrtf(var "
         "+ eps)), with the eps argument, not a constant of your own.",
         [=](std::size_t i) {
           const Moments& s = row(i);
           return (x[i] - s.mean) / std::sqrt(s.var);
         }});
  }
  list.push_back({"eps added to the standard deviation: (x - mean) / (sqrt(var) + eps)",
                  "eps belongs inside the square root, y = (x - mean) / sqrt(var + eps), as "
                  "PyTorch's layer_norm does: rsqrtf(var + eps).",
                  [=](std::size_t i) {
                    const Moments& s = row(i);
                    return (x[i] - s.mean) / (std::sqrt(s.var) + eps);
                  }});
  list.push_back({"(x - mean) / (var + eps): the square root left out",
                  "divide by the standard deviation, sqrt(var + eps), not by the variance: "
                  "multiply by rsqrtf(var + eps).",
                  [=](std::size_t i) {
                    const Moments& s = row(i);
                    return (x[i] - s.mean) / (s.var + eps);
                  }});
  list.push_back({"x / sqrt(var + eps): the mean not subtracted",
                  "the statistics are right, but the last step must centre each element: y = (x "
                  "- mean) * rsqrtf(var + eps).",
                  [=](std::size_t i) { return x[i] / std::sqrt(row(i).var + eps); }});
  // Sums divided by the number of threads of a block (or a warp) instead of by cols.
  // With the launch observed, only its block size and a warp are candidates: a row of 1024 whose
  // sums are counted twice is the same output as one divided by 512.
  const std::size_t observed = inference::block_threads();
  for (std::size_t threads : {32, 64, 128, 256, 512, 1024}) {
    if (threads == cols || (observed != 0 && threads != observed && threads != 32)) continue;
    auto scaled = std::make_shared<std::vector<Moments>>(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      Moments& s = (*scaled)[r];
      s.mean = (*m)[r].mean * double(cols) / double(threads);
      for (std::size_t c = 0; c < cols; ++c)
        s.var += (x[r * cols + c] - s.mean) * (x[r * cols + c] - s.mean);
      s.var /= double(threads);
    }
    list.push_back(detail::with_stats(
        "the sums divided by the number of threads (" + std::to_string(threads) + "), not by cols",
        "mean = sum / cols and var = sum((x - mean)^2) / cols: a row has cols elements, however "
        "many threads share it (blockDim.x, or 32 for a warp).",
        x, eps, [scaled, cols](std::size_t i) { return (*scaled)[i / cols]; }));
  }

  // A warp per row (thread t of the warp takes columns t, t + 32, ...) reduced with
  // __shfl_down_sync, and the result used by every thread: only thread 0 of the warp holds the
  // total. Each thread normalizes its columns with what its own reduction left it.
  if (cols >= 2) {
    auto per_thread = std::make_shared<std::vector<Moments>>(rows * 32);
    for (std::size_t r = 0; r < rows; ++r) {
      const float* v = x.data() + r * cols;
      Moments* stats = per_thread->data() + r * 32;
      std::array<double, 32> sums =
          detail::shuffle_down_sums([&](std::size_t, std::size_t c) { return double(v[c]); }, cols);
      for (std::size_t t = 0; t < 32; ++t) stats[t].mean = sums[t] / double(cols);
      sums = detail::shuffle_down_sums(
          [&](std::size_t t, std::size_t c) {
            return (v[c] - stats[t].mean) * (v[c] - stats[t].mean);
          },
          cols);
      for (std::size_t t = 0; t < 32; ++t) stats[t].var = sums[t] / double(cols);
    }
    list.push_back(detail::with_stats(
        "the warp's sum read in every thread after __shfl_down_sync",
        "__shfl_down_sync leaves the total in the warp's first thread only; the others hold "
        "partial sums, so every column but the first of each 32 is normalized with wrong "
        "statistics. Use __shfl_xor_sync (a butterfly: every thread ends with the total), or "
        "broadcast the first thread's: total = __shfl_sync(0xffffffff, v, 0).",
        x, eps, [per_thread, cols](std::size_t i) {
          return (*per_thread)[i / cols * 32 + i % cols % 32];
        }));
  }

  // Statistics over the wrong elements: rows and cols swapped, a column's, the whole matrix's.
  // With one row the whole matrix is the row (right), and a column or a swapped row is one
  // element (zeros, as a kernel that writes zeros); with one column all three are the same.
  if (rows >= 2 && cols >= 2 && rows != cols) {
    auto chunks = std::make_shared<std::vector<Moments>>(row_moments(x, cols, rows));
    list.push_back(detail::with_stats(
        "rows and cols swapped",
        "your kernel reads the matrix as " + std::to_string(cols) + " rows of " +
            std::to_string(rows) +
            ": each row has cols elements and starts at x + row * cols. Check the order of rows "
            "and cols in the launch (one block or warp per row: rows of them) and in the kernel's "
            "arguments.",
        x, eps, [chunks, rows](std::size_t i) { return (*chunks)[i / rows]; }));
  }
  if (rows >= 2 && cols >= 2) {
    auto columns = std::make_shared<std::vector<Moments>>(cols);
    for (std::size_t c = 0; c < cols; ++c)
      (*columns)[c] = moments(x, rows, [=](std::size_t r) { return r * cols + c; });
    list.push_back(detail::with_stats(
        "the statistics of each column, not of each row",
        "layer_norm normalizes each row with the row's own mean and variance: a block (or warp) "
        "per row reduces x[row * cols + c] over c, the consecutive elements of that row.",
        x, eps, [columns, cols](std::size_t i) { return (*columns)[i % cols]; }));
  }
  if (rows >= 2) {
    const Moments all = moments(x, rows * cols, [](std::size_t i) { return i; });
    list.push_back(detail::with_stats(
        "the statistics of the whole matrix, not of each row",
        "every row has its own mean and variance: reduce over one row's cols elements (a block "
        "or a warp per row, x + row * cols), not over all rows * cols of them.",
        x, eps, [all](std::size_t) { return all; }));
  }

  // A reduction that combines the threads' partial results with the wrong weights (partials lost
  // or counted twice, a merge without its delta term), simulated for every block size.
  for (Mistake& e : inference::reductions(x, rows, cols, eps, *f.y)) list.push_back(std::move(e));

  // Recognised from the output: a NaN that reached other rows, columns or rows never written.
  bool any_nan = false;
  for (const Moments& s : *m) any_nan = any_nan || !std::isfinite(s.mean);
  const workbook::GuardedBuffer<float>& y = *f.y;
  if (any_nan) {
    auto spread = std::make_shared<std::vector<bool>>(rows, false);
    for (std::size_t r = 0; r < rows; ++r) {
      bool all_nan = std::isfinite((*m)[r].mean);
      for (std::size_t c = 0; c < cols && all_nan; ++c)
        all_nan = std::isnan(y[r * cols + c]) && !y.is_poison(r * cols + c);
      (*spread)[r] = all_nan;
    }
    list.push_back(
        {"a NaN from one row in rows that hold none",
         "threads of different rows share a reduction (several rows per block or per "
         "warp), and the NaN row's partial sums reach the others: 0 * NaN is NaN, so "
         "masking another row's value by multiplying it with 0 does not remove it. "
         "Keep each row's sums apart, and select with a condition (c ? v : 0.0f).",
         [=](std::size_t i) { return (*spread)[i / cols] ? nan : normalized(x[i], row(i), eps); }});
  }
  for (std::size_t block : {32, 64, 128, 256, 512, 1024}) {
    if (block >= cols) continue;
    list.push_back(
        {"only the first " + std::to_string(block) + " columns of each row written",
         "one thread per column covers " + std::to_string(block) + " columns of a row of " +
             std::to_string(cols) +
             " (a block of that many threads, or a shared array of that size): loop over the row, "
             "for (c = threadIdx.x; c < cols; c += blockDim.x), for the sums and for the "
             "stores, and size shared memory by threads, not by columns.",
         [=, &y](std::size_t i) {
           if (i % cols >= block) return nan;
           const double g = y[i];
           return y.is_poison(i) || std::isnan(g) ? normalized(x[i], row(i), eps) : g;
         }});
  }
  std::size_t never = 0;  // elements never written at the end of the output
  while (never < rows * cols && y.is_poison(rows * cols - 1 - never)) ++never;
  if (never > 0 && never < rows * cols) {
    const std::size_t covered = rows * cols - never;
    const std::string which = never % cols == 0 ? "the last " + std::to_string(never / cols) +
                                                      " of " + std::to_string(rows) + " rows"
                                                : "the last " + std::to_string(never) + " of " +
                                                      std::to_string(rows * cols) + " elements";
    list.push_back(
        {"a grid that stops short of the end of the matrix",
         which +
             " were never written: the grid's blocks do not reach them. A count of blocks "
             "computed as rows / rows_per_block (or n / threads) rounds down: launch (rows + "
             "rows_per_block - 1) / rows_per_block blocks (or (n + threads - 1) / threads), and "
             "keep the check `if (row >= rows) return;` in the kernel.",
         [=](std::size_t i) { return i >= covered ? nan : normalized(x[i], row(i), eps); }});
  }
  // Rows written in runs: rows 0 to q - 1 of every p (blocks of q rows whose first row is
  // blockIdx.x * p): the row index steps by more than the rows a block holds.
  std::vector<bool> written(rows, false);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols && !written[r]; ++c) written[r] = !y.is_poison(r * cols + c);
  std::size_t q = 0;
  while (q < rows && written[q]) ++q;
  std::size_t p = q;
  while (p < rows && !written[p]) ++p;
  if (q > 0 && p < rows && 2 * p <= rows) {
    bool runs = true;
    for (std::size_t r = 0; r < rows && runs; ++r) runs = written[r] == (r % p < q);
    if (runs)
      list.push_back(
          {"rows written in runs of " + std::to_string(q) + " every " + std::to_string(p),
           "only rows 0 to " + std::to_string(q - 1) + ", " + std::to_string(p) + " to " +
               std::to_string(p + q - 1) + ", ... were written: each block writes " +
               std::to_string(q) + (q == 1 ? " row" : " rows") +
               ", but the first row of block b "
               "is b * " +
               std::to_string(p) +
               ", so the rows between are never reached. The row "
               "of a block's warp w (or thread) is blockIdx.x * " +
               std::to_string(q) +
               " + w: step by the rows a block holds (blockDim.x / 32 for a warp per row), not by "
               "blockDim.x.",
           [=, &y](std::size_t i) {
             return written[i / cols] ? normalized(x[i], row(i), eps) : nan;
           }});
  }
  list.push_back(detail::sum_of_squares(f, m));
  // Last: when nothing above matched but each row is still y = (x - m') / s', what was observed.
  for (Mistake& e : inference::observed(x, rows, cols, eps, *f.y)) list.push_back(std::move(e));
  for (Mistake& e : inference::per_warp(x, rows, cols, *f.y)) list.push_back(std::move(e));
  return list;
}

}  // namespace lab06::mistakes
