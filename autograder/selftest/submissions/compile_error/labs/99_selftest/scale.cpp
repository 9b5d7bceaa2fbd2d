// Self-test submission: lab 99, right.
#include "scale.hpp"

#include <workbook/require.hpp>

namespace lab99 {

void scale(std::span<const float> x, float a, std::span<float> y) {
  workbook::require_elementwise("scale", x, "x", y, "y");
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = a * x[i];
}

}  // namespace lab99
