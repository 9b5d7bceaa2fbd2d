#pragma once
/// \file stats.hpp
/// \brief Summary statistics of timing samples: median and quartiles (robust to the outliers that
/// interrupts and page faults produce), with mean and standard deviation for the record.

#include <cstddef>
#include <span>

namespace workbook {

/// Summary of a set of samples (seconds, ratios, ...).
struct Summary {
  std::size_t count = 0;
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
  double mean = 0, stddev = 0;  ///< sample standard deviation (n - 1)

  double iqr() const { return q3 - q1; }
  /// Interquartile range over the median: the spread measure the timers converge on.
  double rel_iqr() const { return median != 0 ? iqr() / median : 0; }
  /// Coefficient of variation, stddev / mean.
  double cv() const { return mean != 0 ? stddev / mean : 0; }
};

/// The p-quantile (0 <= p <= 1) of sorted samples, interpolating linearly between order statistics
/// (Hyndman and Fan type 7, as R and NumPy do by default). Throws on an empty span.
double quantile(std::span<const double> sorted, double p);

/// Summary of unsorted samples. Throws std::invalid_argument on an empty span or a NaN sample.
Summary summarize(std::span<const double> samples);

}  // namespace workbook
