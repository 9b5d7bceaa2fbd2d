#include <workbook/stats.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace workbook {

double quantile(std::span<const double> sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("quantile of no samples");
  if (p <= 0) return sorted.front();
  if (p >= 1) return sorted.back();
  const double h = (static_cast<double>(sorted.size()) - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

Summary summarize(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  std::vector<double> s(samples.begin(), samples.end());
  for (double x : s)
    if (std::isnan(x)) throw std::invalid_argument("summarize: a sample is NaN");
  std::sort(s.begin(), s.end());
  Summary r;
  r.count = s.size();
  r.min = s.front();
  r.max = s.back();
  r.q1 = quantile(s, 0.25);
  r.median = quantile(s, 0.5);
  r.q3 = quantile(s, 0.75);
  double sum = 0;
  for (double x : s) sum += x;
  r.mean = sum / static_cast<double>(s.size());
  double sq = 0;
  for (double x : s) sq += (x - r.mean) * (x - r.mean);
  r.stddev = s.size() > 1 ? std::sqrt(sq / static_cast<double>(s.size() - 1)) : 0;
  return r;
}

}  // namespace workbook
