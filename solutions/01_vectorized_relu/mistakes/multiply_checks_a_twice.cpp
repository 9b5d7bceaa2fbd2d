// Mistake: the size check copied for the second operand still names a: b's size is never checked.
// Checked by: BinaryOps.RejectMismatchedSizes
// Expect: b is shorter than the other two: only that is wrong in this call
#include "vector_ops.hpp"

#include <workbook/require.hpp>

namespace lab01 {

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("multiply", a, "a", out, "out");
  workbook::require_elementwise("multiply", a, "a", out, "out");
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = a[i] * b[i];
}

}  // namespace lab01
