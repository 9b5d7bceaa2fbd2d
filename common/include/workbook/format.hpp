#pragma once
/// \file format.hpp
/// \brief Numbers as every table and message of the harness shows them: times with their unit,
/// fixed decimals, percentages.

#include <string>

namespace workbook {

/// "11.2 ms", "532 us", "1.23 s", "45 ns".
std::string format_seconds(double seconds);
/// Fixed-point with `digits` decimals.
std::string format_fixed(double value, int digits = 1);
/// "79%".
std::string format_percent(double fraction);

}  // namespace workbook
