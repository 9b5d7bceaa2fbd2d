#pragma once
// The float64 answer lab 06's normalize is checked against, and the tolerance it is checked with.
// Shared by the correctness tests, the perf cases and the solution's version tests. A failed check
// names the mistake it matches from the lab's catalogue (normalize_mistakes.hpp).
#include "normalize_mistakes.hpp"

#include <workbook/check.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace lab06::oracle {

/// One row's exact statistics (in float64, two passes) and the error a float32 kernel may make.
struct Row {
  double mean = 0, inv_std = 0;  ///< mean, and 1 / sqrt(var + eps)
  double mean_error = 0;         ///< delta: how far a float32 mean may be from the exact one
  double scale_error = 0;        ///< how far, relatively, a float32 1 / sqrt(var + eps) may be off
  bool nan = false;              ///< the row holds a NaN (or an infinity): all of it must be NaN
};

/// The bound, derived. With u = 2^-24 and gamma_k = k u / (1 - k u):
///  - the mean is a float32 sum of N terms in any order, then a division: it is within
///    delta = gamma_(2N+2) max|x| of the exact mean (gamma_(N+1) mean|x| for a plain sum; the 2N
///    and max|x| also cover Welford's running mean, whose N updates round about twice per term);
///  - sum((x - mean')^2) / N with the computed mean' equals var + (mean - mean')^2 exactly, and the
///    float32 sum of those squares rounds with gamma_(N+4) (difference, square, N terms, division,
///    + eps); so var' + eps is within delta^2 + gamma_(N+4) (var + eps + delta^2) of var + eps;
///  - 1 / sqrt of it: half that relative error, plus 4 u for rsqrtf (2 ulp) or sqrt then divide;
///  - y = (x - mean') * r': 2 more roundings. So |y' - y| <= delta / s + |y| (scale_error + 2 u),
///    with s = sqrt(var + eps). The bound used is twice that first-order bound, which covers the
///    second-order terms (products of first-order ones, each below 1 for every input tested).
inline std::vector<Row> rows_of(std::span<const float> x, std::size_t rows, std::size_t cols,
                                double eps) {
  constexpr double u = 0x1p-24;
  auto gamma = [](double k) { return k * u / (1 - k * u); };
  std::vector<Row> stats(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::span<const float> v = x.subspan(r * cols, cols);
    Row& s = stats[r];
    double sum = 0, largest = 0;
    for (float f : v) {
      s.nan = s.nan || !std::isfinite(f);
      sum += f;
      largest = std::max(largest, std::fabs(double(f)));
    }
    if (s.nan) continue;
    s.mean = sum / double(cols);
    double squares = 0;
    for (float f : v) squares += (f - s.mean) * (f - s.mean);
    const double var_eps = squares / double(cols) + eps;
    s.inv_std = 1 / std::sqrt(var_eps);
    const double n = double(cols);
    s.mean_error = gamma(2 * n + 2) * largest;
    const double d2 = s.mean_error * s.mean_error;
    s.scale_error = 0.5 * (d2 + gamma(n + 4) * (var_eps + d2)) / var_eps + 4 * u;
  }
  return stats;
}

inline workbook::Where where() {
  return {"normalize", "labs/06_cuda_normalize/normalize.cu", workbook::Model::cuda};
}

inline workbook::Tolerance tolerance() {
  return {1.0, 0,
          "per element: twice the first-order bound delta / s + |y| (e + 2u), where delta = "
          "gamma_(2N+2) max|x| bounds the float32 mean's error, s = sqrt(var + eps), and e = "
          "(delta^2 + gamma_(N+4)(s^2 + delta^2)) / (2 s^2) + 4u bounds 1/sqrt's (see "
          "normalize_oracle.hpp)"};
}

/// The exact normalization of element i of x (rows of `cols`), from rows_of's statistics.
inline double normalized(const std::vector<Row>& stats, std::span<const float> x, std::size_t cols,
                         std::size_t i) {
  const Row& s = stats[i / cols];
  return s.nan ? std::nan("") : (x[i] - s.mean) * s.inv_std;
}

/// The error element i may have: the scale that tolerance() multiplies (see rows_of).
inline double error_bound(const std::vector<Row>& stats, std::span<const float> x, std::size_t cols,
                          std::size_t i) {
  const Row& s = stats[i / cols];
  return 2 * (s.mean_error * s.inv_std +
              std::fabs(normalized(stats, x, cols, i)) * (s.scale_error + 2 * 0x1p-24));
}

/// y (rows x cols) against the exact normalization of x. `run_again` (optional) poisons y, runs
/// normalize again on the same x and fetches y again: a failing output that changes between the
/// two runs is called a race.
inline workbook::CheckResult check_normalize(std::span<const float> x, std::size_t rows,
                                             std::size_t cols, double eps,
                                             const workbook::GuardedBuffer<float>& y,
                                             std::function<void()> run_again = {}) {
  const std::vector<Row> stats = rows_of(x, rows, cols, eps);
  auto want = [&, cols](std::size_t i) { return normalized(stats, x, cols, i); };
  auto bound = [&, cols](std::size_t i) { return error_bound(stats, x, cols, i); };
  return workbook::check_elementwise(
      y, want,
      {.where = where(),
       .tolerance = tolerance(),
       .inputs = {workbook::column("x", x)},
       .shape = {.rows = rows, .cols = cols},
       .scale = bound,
       .mistakes =
           [&] {
             return mistakes::normalize_mistakes({x, rows, cols, eps, &y});
           },
       .run_again = std::move(run_again)});
}

}  // namespace lab06::oracle
