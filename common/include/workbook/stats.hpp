#pragma once
/// \file stats.hpp
/// \brief Summary statistics of timing samples: median and quartiles (robust to the outliers that
/// interrupts and page faults produce), with mean and standard deviation for the record.

#include <cstddef>
#include <span>

namespace workbook {

/// Summary of a set of samples (seconds, ratios, ...).
struct Summary {
  std::size_t count = 0;  ///< number of samples
  double min = 0;         ///< the smallest sample: for times, the least disturbed run
  double q1 = 0;          ///< first quartile
  double median = 0;      ///< the figure every comparison uses: robust to a few slow runs
  double q3 = 0;          ///< third quartile
  double max = 0;         ///< the largest sample
  double mean = 0;        ///< arithmetic mean, for the record (outliers pull it)
  double stddev = 0;      ///< sample standard deviation (n - 1)

  /// Interquartile range, q3 - q1: the spread of the middle half of the samples.
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
