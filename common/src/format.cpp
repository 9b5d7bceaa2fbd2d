#include <workbook/format.hpp>

#include <cmath>
#include <cstdio>

namespace workbook {

std::string format_seconds(double s) {
  char text[32];
  const double a = std::fabs(s);
  if (a >= 1)
    std::snprintf(text, sizeof text, "%.3g s", s);
  else if (a >= 1e-3)
    std::snprintf(text, sizeof text, "%.3g ms", s * 1e3);
  else if (a >= 1e-6)
    std::snprintf(text, sizeof text, "%.3g us", s * 1e6);
  else
    std::snprintf(text, sizeof text, "%.3g ns", s * 1e9);
  return text;
}

std::string format_fixed(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string format_ratio(double ratio) {
  if (ratio == 0 || std::fabs(ratio) >= 0.1) return format_fixed(ratio, 2) + "x";
  // Two significant digits: as many decimals as the leading zeros need, and two more.
  const int digits = 1 - static_cast<int>(std::floor(std::log10(std::fabs(ratio))));
  return format_fixed(ratio, digits) + "x";
}

std::string format_percent(double fraction) {
  return format_fixed(100 * fraction, 0) + "%";
}

}  // namespace workbook
