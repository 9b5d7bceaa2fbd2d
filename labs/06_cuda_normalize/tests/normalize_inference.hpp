#pragma once
// The statistics lab 06's kernel used, inferred from its output. A per-row normalization writes
// y = (x - m') / s', affine in x within each row, so its output says which m' and s' it used. The
// usual reductions split a row between the threads of a block (thread t of B takes columns c with
// c % B == t, or the float4s (c / 4) % B == t) and combine their partial results; a reduction that
// goes wrong combines them with the wrong weights: a tree over a count that is not a power of two
// drops some, a shuffle that starts at offset 32 counts each twice, a Welford merge without its
// delta term drops the spread between the partial means. Each is simulated here exactly (in
// float64, like the oracle) for every block size a launch can have; the ones whose answer is close
// to the output on a few rows become catalogue entries (normalize_mistakes.hpp), and check.cpp
// names the one that matches every element. When none does but every row is still affine, the
// last entry says what was observed: each row's m' and s' against its own mean and deviation.
#include <workbook/buffer.hpp>
#include <workbook/check.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace lab06::inference {

/// The threads per block (blockDim.x) of the launch that wrote the output being checked, when the
/// harness observed it: a GPU test installs a function that reads workbook/cuda/launches.hpp's
/// record. Unset (or 0): unknown, and every block size is a candidate.
inline std::function<std::size_t()>& observed_block_threads() {
  static std::function<std::size_t()> observed;
  return observed;
}

/// observed_block_threads()'s answer, or 0.
inline std::size_t block_threads() {
  return observed_block_threads() ? observed_block_threads()() : 0;
}

/// One row's statistics as a kernel used them: y = (x - mean) / sqrt(var + eps).
struct Stats {
  double mean = 0, var = 0;
};

/// How a row's columns are dealt to the B threads of a block: one float at a time, or a float4.
enum class Deal { floats, float4s };

/// The thread of B that takes column c.
inline std::size_t thread_of(std::size_t c, std::size_t threads, Deal deal) {
  return (deal == Deal::floats ? c : c / 4) % threads;
}

/// Which of `count` partial results reach the total of a halving tree in shared memory,
/// `for (half = count / 2; half > 0; half /= 2) if (t < half) s[t] += s[t + half];`: all of them
/// when count is a power of two; otherwise the odd one out of each odd step is lost.
inline std::vector<bool> halving_tree_reaches(std::size_t count) {
  std::vector<std::size_t> owner(count);
  for (std::size_t t = 0; t < count; ++t) owner[t] = t;
  for (std::size_t half = count / 2; half > 0; half /= 2)
    for (std::size_t& o : owner)
      if (o >= half && o < 2 * half) o -= half;
  std::vector<bool> reaches(count);
  for (std::size_t t = 0; t < count; ++t) reaches[t] = owner[t] == 0;
  return reaches;
}

/// "192, 96, 48, 24, 12, 6, 3, 1": the counts a halving tree goes through.
inline std::string halving_steps(std::size_t count) {
  std::string s = std::to_string(count);
  for (std::size_t half = count / 2; half > 0; half /= 2) s += ", " + std::to_string(half);
  return s;
}

/// "threads 64-95 and 160-191", or "threads 2, 5, 8, ..., 191 (every 3rd)": the threads of `lost`
/// (one flag per thread).
inline std::string thread_ranges(const std::vector<bool>& lost) {
  std::vector<std::size_t> ids;
  for (std::size_t t = 0; t < lost.size(); ++t)
    if (lost[t]) ids.push_back(t);
  if (ids.size() > 4) {  // an arithmetic progression with a step above 1
    const std::size_t step = ids[1] - ids[0];
    bool progression = step > 1;
    for (std::size_t k = 1; k < ids.size() && progression; ++k)
      progression = ids[k] - ids[k - 1] == step;
    if (progression)
      return "threads " + std::to_string(ids[0]) + ", " + std::to_string(ids[1]) + ", " +
             std::to_string(ids[2]) + ", ..., " + std::to_string(ids.back()) + " (every " +
             std::to_string(step) +
             (step == 2   ? "nd"
              : step == 3 ? "rd"
                          : "th") +
             ")";
  }
  std::vector<std::string> parts;
  for (std::size_t k = 0; k < ids.size();) {
    std::size_t end = k;
    while (end + 1 < ids.size() && ids[end + 1] == ids[end] + 1) ++end;
    parts.push_back(end == k ? std::to_string(ids[k])
                             : std::to_string(ids[k]) + "-" + std::to_string(ids[end]));
    k = end + 1;
  }
  std::string s = ids.size() == 1 ? "thread " : "threads ";
  for (std::size_t k = 0; k < parts.size(); ++k)
    s += (k == 0 ? "" : k + 1 == parts.size() ? " and " : ", ") + parts[k];
  return s;
}

/// A hypothesis about the reduction: the statistics it gives each row, and what to say.
struct Hypothesis {
  std::string what, advice;
  std::function<Stats(std::span<const float> row)> stats;
};

/// The hypotheses for rows of `cols` columns: blocks of `block` threads (the launch observed), or
/// when 0 of every size from one warp to 1024 threads in steps of a warp; both deals.
inline std::vector<Hypothesis> hypotheses(std::size_t cols, std::size_t block) {
  std::vector<Hypothesis> list;
  const double n = double(cols);
  // Every sum counted twice: the mean doubled, and the variance twice that about the doubled mean.
  list.push_back(
      {"every sum counted twice (your mean is exactly 2x the row's, and your variance twice the "
       "spread about it)",
       "a warp's shuffle sum that starts at offset 32 adds each value to itself first (thread "
       "^ 32 and thread + 32 are outside the warp, so __shfl_*_sync returns the thread's own "
       "value): start at offset 16 (16, 8, 4, 2, 1). Otherwise a partial sum is added twice (by "
       "two threads, or before and after a barrier).",
       [n](std::span<const float> row) {
         double sum = 0;
         for (float v : row) sum += v;
         Stats s{2 * sum / n, 0};
         for (float v : row) s.var += (v - s.mean) * (v - s.mean);
         s.var = 2 * s.var / n;
         return s;
       }});
  for (Deal deal : {Deal::floats, Deal::float4s}) {
    const std::string dealt = deal == Deal::floats ? "" : " (float4s dealt to threads)";
    for (std::size_t threads = 32; threads <= 1024; threads += 32) {
      if (block != 0 && threads != block) continue;
      const std::size_t warps = threads / 32;
      // Partial results weighted 0 or 1: a tree over the threads, or over the warps' totals.
      for (bool by_warp : {false, true}) {
        const std::size_t count = by_warp ? warps : threads;
        if (count < 3 || (count & (count - 1)) == 0) continue;  // a power of two loses nothing
        const std::vector<bool> reaches = halving_tree_reaches(count);
        std::vector<bool> lost(threads);
        for (std::size_t t = 0; t < threads; ++t) lost[t] = !reaches[by_warp ? t / 32 : t];
        std::size_t kept_columns = 0;
        for (std::size_t c = 0; c < cols; ++c) kept_columns += !lost[thread_of(c, threads, deal)];
        if (kept_columns == cols) continue;  // this row width loses nothing
        std::ostringstream what;
        what << "the partial sums of " << thread_ranges(lost) << " of each block of " << threads
             << " never reaching the total";
        std::ostringstream advice;
        advice << "your mean is the sum of " << kept_columns << " of the row's " << cols
               << " elements divided by " << cols << dealt << ": a halving tree over " << count
               << (by_warp ? " warp totals" : " threads") << " (" << halving_steps(count)
               << ") drops the odd one out at each odd step. Reduce each warp with shuffles, "
                  "then the warps' totals in one warp; or round the tree's count up to a power "
                  "of two, with zeros for the missing partials.";
        list.push_back({what.str(), advice.str(), [=](std::span<const float> row) {
                          Stats s;
                          for (std::size_t c = 0; c < row.size(); ++c)
                            if (!lost[thread_of(c, threads, deal)]) s.mean += row[c];
                          s.mean /= n;
                          for (std::size_t c = 0; c < row.size(); ++c)
                            if (!lost[thread_of(c, threads, deal)])
                              s.var += (row[c] - s.mean) * (row[c] - s.mean);
                          s.var /= n;
                          return s;
                        }});
      }
      // With the launch observed: any run of whole warps whose partials are left out (a tree that
      // starts too low, a loop over too few warp totals). Runs a tree above already names are
      // not repeated.
      for (std::size_t first = 0; block != 0 && first < warps; ++first)
        for (std::size_t end = first + 1; end <= warps; ++end) {
          if (first == 0 && end == warps) continue;
          // Only threads that hold columns of this row width show in the output: the run is
          // named by those (threads 128-255 lost, at 129 columns, show as thread 128 alone).
          std::vector<bool> lost(threads, false);
          for (std::size_t c = 0; c < cols; ++c) {
            const std::size_t t = thread_of(c, threads, deal);
            lost[t] = t >= first * 32 && t < end * 32;
          }
          std::size_t kept_columns = 0;
          for (std::size_t c = 0; c < cols; ++c) kept_columns += !lost[thread_of(c, threads, deal)];
          if (kept_columns == cols || kept_columns == 0) continue;
          std::ostringstream what;
          what << "the partial sums of " << thread_ranges(lost) << " of each block of " << threads
               << " never reaching the total";
          if (std::any_of(list.begin(), list.end(),
                          [&](const Hypothesis& h) { return h.what == what.str(); }))
            continue;
          std::ostringstream advice;
          advice << "your mean is the sum of " << kept_columns << " of the row's " << cols
                 << " elements divided by " << cols << dealt
                 << ": the reduction leaves those warps' partial sums out. Check where the tree "
                    "starts (half = blockDim.x / 2) and that the last step covers every warp's "
                    "total (blockDim.x / 32 of them).";
          list.push_back({what.str(), advice.str(), [=](std::span<const float> row) {
                            Stats s;
                            for (std::size_t c = 0; c < row.size(); ++c)
                              if (!lost[thread_of(c, threads, deal)]) s.mean += row[c];
                            s.mean /= n;
                            for (std::size_t c = 0; c < row.size(); ++c)
                              if (!lost[thread_of(c, threads, deal)])
                                s.var += (row[c] - s.mean) * (row[c] - s.mean);
                            s.var /= n;
                            return s;
                          }});
        }
      // Welford's partial results merged without d^2 * na * nb / n: the right mean, and the
      // average spread within each thread's (or warp's) columns as the variance.
      for (bool by_warp : {false, true}) {
        if (by_warp && warps < 2) continue;
        const std::size_t groups = by_warp ? warps : threads;
        std::ostringstream advice;
        advice << "merging two partial results (count n, mean, M2) must add d * d * na * nb / n "
                  "to M2, d = mean_b - mean_a: without it the variance is only the spread "
                  "within each "
               << (by_warp ? "warp's" : "thread's") << " columns (blocks of " << threads
               << " threads" << dealt
               << "), smaller than the row's. Add the term at every merge, shuffles included.";
        list.push_back(
            {"the variance without the spread between the partial means (Welford's merge "
             "without its delta term)",
             advice.str(), [=](std::span<const float> row) {
               std::vector<double> sum(groups, 0), count(groups, 0);
               auto group = [&](std::size_t c) {
                 const std::size_t t = thread_of(c, threads, deal);
                 return by_warp ? t / 32 : t;
               };
               Stats s;
               for (std::size_t c = 0; c < row.size(); ++c) {
                 sum[group(c)] += row[c];
                 count[group(c)] += 1;
                 s.mean += row[c];
               }
               s.mean /= n;
               for (std::size_t c = 0; c < row.size(); ++c) {
                 const double d = row[c] - sum[group(c)] / count[group(c)];
                 s.var += d * d;
               }
               s.var /= n;
               return s;
             }});
      }
    }
  }
  return list;
}

/// True when every element of x and y is finite and y was written: the output can be read as
/// rows of y = (x - m') / s'.
inline bool readable(std::span<const float> x, std::size_t n,
                     const workbook::GuardedBuffer<float>& y) {
  for (std::size_t i = 0; i < n; ++i)
    if (y.is_poison(i) || !std::isfinite(y[i]) || !std::isfinite(x[i])) return false;
  return n > 0;
}

/// The catalogue entries of the hypotheses whose answer is close to y on the first rows (a cheap
/// screen; check.cpp then compares every element within the check's bound).
inline std::vector<workbook::Mistake> reductions(std::span<const float> x, std::size_t rows,
                                                 std::size_t cols, double eps,
                                                 const workbook::GuardedBuffer<float>& y) {
  std::vector<workbook::Mistake> list;
  if (!readable(x, rows * cols, y)) return list;
  auto row_of = [x, cols](std::size_t r) { return x.subspan(r * cols, cols); };
  auto answer = [eps](float v, const Stats& s) { return (v - s.mean) / std::sqrt(s.var + eps); };
  const std::size_t screened = std::min<std::size_t>(rows, 4);
  for (Hypothesis& h : hypotheses(cols, block_threads())) {
    bool close = true;
    for (std::size_t r = 0; r < screened && close; ++r) {
      const Stats s = h.stats(row_of(r));
      for (std::size_t c = 0; c < cols && close; ++c) {
        const double want = answer(x[r * cols + c], s);
        close = std::fabs(y[r * cols + c] - want) <= 1e-3 * (1 + std::fabs(want));
      }
    }
    if (!close) continue;
    auto stats = std::make_shared<std::vector<Stats>>(rows);
    for (std::size_t r = 0; r < rows; ++r) (*stats)[r] = h.stats(row_of(r));
    list.push_back(
        {h.what, h.advice, [=](std::size_t i) { return answer(x[i], (*stats)[i / cols]); }});
  }
  return list;
}

/// When every row of y is affine in x (y = (x - m') / s') but no entry matched: the last entry of
/// the catalogue, which says what was observed, the m' and s' of the first row whose statistics are
/// not its own, against its own, and the ratios when they are the same in every row.
inline std::vector<workbook::Mistake> observed(std::span<const float> x, std::size_t rows,
                                               std::size_t cols, double eps,
                                               const workbook::GuardedBuffer<float>& y) {
  std::vector<workbook::Mistake> list;
  if (cols < 2 || !readable(x, rows * cols, y)) return list;

  // What was observed: each row's least-squares line y = a x + b, i.e. m' = -b / a, s' = 1 / a.
  struct Fit {
    double a = 0, b = 0, mean = 0, sd = 0;
  };
  auto fits = std::make_shared<std::vector<Fit>>(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    double sx = 0, sy = 0;
    for (std::size_t c = 0; c < cols; ++c) sx += x[r * cols + c], sy += y[r * cols + c];
    const double mx = sx / double(cols), my = sy / double(cols);
    double sxx = 0, sxy = 0;
    for (std::size_t c = 0; c < cols; ++c) {
      const double dx = x[r * cols + c] - mx;
      sxx += dx * dx, sxy += dx * (y[r * cols + c] - my);
    }
    Fit& f = (*fits)[r];
    f.mean = mx, f.sd = std::sqrt(sxx / double(cols));
    if (sxx == 0 || !(sxy > 0)) return list;  // not a normalization with a positive scale
    f.a = sxy / sxx;
    f.b = my - f.a * mx;
  }
  // Ratios of m' and s' to the row's own, over the rows; a constant ratio is worth saying.
  double mean_ratio_lo = INFINITY, mean_ratio_hi = -INFINITY, sd_ratio_lo = INFINITY,
         sd_ratio_hi = -INFINITY;
  bool means_away_from_zero = true;
  for (const Fit& f : *fits) {
    const double m = -f.b / f.a, s = 1 / f.a;
    means_away_from_zero = means_away_from_zero && std::fabs(f.mean) > 1e-2 * f.sd;
    if (means_away_from_zero) {
      mean_ratio_lo = std::min(mean_ratio_lo, m / f.mean);
      mean_ratio_hi = std::max(mean_ratio_hi, m / f.mean);
    }
    const double true_s = std::sqrt(f.sd * f.sd + eps);
    sd_ratio_lo = std::min(sd_ratio_lo, s / true_s);
    sd_ratio_hi = std::max(sd_ratio_hi, s / true_s);
  }
  std::size_t first = 0, wrong_rows = 0;
  for (std::size_t r = rows; r-- > 0;) {
    const Fit& f = (*fits)[r];
    const double true_s = std::sqrt(f.sd * f.sd + eps);
    if (std::fabs(-f.b / f.a - f.mean) > 1e-4 * true_s || std::fabs(1 / f.a / true_s - 1) > 1e-4)
      first = r, ++wrong_rows;
  }
  if (wrong_rows == 0) return list;
  const Fit& f0 = (*fits)[first];
  std::ostringstream advice;
  advice.precision(4);
  advice << "fitting y = (x - m') / s' to each row of your output, " << wrong_rows << " of " << rows
         << " rows use statistics that are not their own; row " << first
         << " has m' = " << -f0.b / f0.a << " (the row's mean is " << f0.mean
         << ") and s' = " << 1 / f0.a << " (the row's sqrt(var + eps) is "
         << std::sqrt(f0.sd * f0.sd + eps) << ")";
  if (means_away_from_zero && mean_ratio_hi - mean_ratio_lo <= 1e-2 * std::fabs(mean_ratio_hi))
    advice << "; in every row m' is " << mean_ratio_hi << "x the row's mean";
  if (sd_ratio_hi - sd_ratio_lo <= 1e-3 * std::fabs(sd_ratio_hi))
    advice << "; in every row s' is " << sd_ratio_hi << "x the row's sqrt(var + eps)";
  // Statistics of zero: m' = 0 and s' = sqrt(eps) in every row.
  bool zero_statistics = true;
  for (const Fit& f : *fits)
    zero_statistics = zero_statistics && std::fabs(-f.b / f.a) <= 1e-3 * (f.sd + 1e-30) &&
                      std::fabs(1 / f.a / std::sqrt(eps) - 1) <= 1e-3;
  if (zero_statistics)
    advice
        << ". That is a mean and a variance of 0 in every row: nothing reached the sums, or they "
           "were multiplied by 0. 1 / cols is 0 in integer arithmetic (cols is an integer): "
           "divide by float(cols), or multiply by 1.0f / cols";
  advice << ". The statistics your kernel computes are wrong: check which threads' partial "
            "sums reach the total (every column once), what the sums are divided by (cols), "
            "and each merge of partial results.";
  workbook::Mistake fitted{"rows normalized with statistics other than their own", advice.str(),
                           [x, cols, fits](std::size_t i) {
                             const Fit& f = (*fits)[i / cols];
                             return f.a * x[i] + f.b;
                           }};
  fitted.broad = true;  // fitted to the output: it matches whatever statistics are wrong
  list.push_back(std::move(fitted));
  return list;
}

/// When no row is one line y = (x - m') / s' but the columns of each warp are (a warp's own line):
/// the warps of a block normalized their columns with statistics of their own, a total that was
/// not shared between them. Needs the block size of the launch (observed_block_threads).
inline std::vector<workbook::Mistake> per_warp(std::span<const float> x, std::size_t rows,
                                               std::size_t cols,
                                               const workbook::GuardedBuffer<float>& y) {
  std::vector<workbook::Mistake> list;
  const std::size_t threads = block_threads();
  if (threads < 64 || threads % 32 != 0 || cols < threads || !readable(x, rows * cols, y))
    return list;
  const std::size_t warps = threads / 32;
  for (Deal deal : {Deal::floats, Deal::float4s}) {
    auto warp_of = [=](std::size_t c) { return thread_of(c, threads, deal) / 32; };
    // Each (row, warp) group's line, by least squares; the line must fit every element.
    struct Line {
      double a = 0, b = 0, mean = 0;  // mean: of the group's own x
    };
    auto lines = std::make_shared<std::vector<Line>>(rows * warps);
    bool fits = true, differ = false, own = true;
    for (std::size_t r = 0; r < rows && fits; ++r) {
      std::vector<double> n(warps, 0), sx(warps, 0), sy(warps, 0), sxx(warps, 0), sxy(warps, 0);
      for (std::size_t c = 0; c < cols; ++c) {
        const std::size_t w = warp_of(c);
        n[w] += 1, sx[w] += x[r * cols + c], sy[w] += y[r * cols + c];
      }
      for (std::size_t c = 0; c < cols; ++c) {
        const std::size_t w = warp_of(c);
        const double dx = x[r * cols + c] - sx[w] / n[w];
        sxx[w] += dx * dx, sxy[w] += dx * (y[r * cols + c] - sy[w] / n[w]);
      }
      for (std::size_t w = 0; w < warps && fits; ++w) {
        if (n[w] < 2 || sxx[w] == 0 || !(sxy[w] > 0)) fits = false;
        Line& l = (*lines)[r * warps + w];
        l.mean = sx[w] / n[w];
        l.a = fits ? sxy[w] / sxx[w] : 0;
        l.b = sy[w] / n[w] - l.a * l.mean;
      }
      for (std::size_t c = 0; c < cols && fits; ++c) {
        const Line& l = (*lines)[r * warps + warp_of(c)];
        const double fit = l.a * x[r * cols + c] + l.b;
        fits = std::fabs(y[r * cols + c] - fit) <= 1e-3 * (1 + std::fabs(fit));
      }
      for (std::size_t w = 1; w < warps && fits; ++w) {
        const Line &l = (*lines)[r * warps + w], &first = (*lines)[r * warps];
        differ = differ || std::fabs(l.a / first.a - 1) > 1e-3;
        // The line of a warp's own columns: y = (x - mean_w) / s, centred on the warp's mean.
        own = own && std::fabs(l.a * l.mean + l.b) <= 1e-3 * (1 + std::fabs(l.b));
      }
    }
    if (!fits || !differ) continue;
    std::ostringstream advice;
    advice << "each warp of your blocks of " << threads
           << " threads normalized its columns of a row"
           << (deal == Deal::floats ? "" : " (float4s dealt to threads)")
           << " with a mean and scale"
           << " of its own: fitting y = (x - m') / s' to each warp's columns gives " << warps
           << " different lines per row"
           << (own ? ", each centred on the mean of that warp's own columns" : "")
           << ". The block's total reached only the warp that computed it: after the last step "
              "of the reduction, write the total to shared memory, __syncthreads(), and let every "
              "warp read it (or reduce the warps' totals in every warp).";
    list.push_back({"each warp normalizing with statistics of its own, not the row's", advice.str(),
                    [x, cols, warps, lines, warp_of](std::size_t i) {
                      const Line& l = (*lines)[i / cols * warps + warp_of(i % cols)];
                      return l.a * x[i] + l.b;
                    }});
    break;
  }
  return list;
}

}  // namespace lab06::inference
