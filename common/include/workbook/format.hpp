#pragma once
/// \file format.hpp
/// \brief Numbers as every table and message of the harness shows them: times with their unit,
/// fixed decimals, ratios, percentages.

#include <string>

namespace workbook {

/// "11.2 ms", "532 us", "1.23 s", "45 ns".
std::string format_seconds(double seconds);
/// Fixed-point with `digits` decimals.
std::string format_fixed(double value, int digits = 1);
/// A ratio of two times: "1.21x", "0.98x", and a small one to its first two significant digits,
/// "0.0031x" (never "0.00x").
std::string format_ratio(double ratio);
/// "79%".
std::string format_percent(double fraction);

}  // namespace workbook
