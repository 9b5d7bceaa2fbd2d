// Lab 99: the stub.
#include "scale.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>

namespace lab99 {

void scale(std::span<const float> x, float a, std::span<float> y) {
  workbook::require_elementwise("scale", x, "x", y, "y");
  (void)a;
  // TODO(lab99): y[i] = a * x[i].
  throw workbook::NotImplemented("scale");
}

}  // namespace lab99
