// Mistake: the tail done as one more whole batch ending at n, overlapping the batch before it:
// right out of place, but in place (out is a) the overlap is multiplied by b twice.
// Checked by: Multiply.UnalignedAndInPlace
// Expect: computed twice, the second time from the output (in place, out is a)
// Expect: not with an overlapping whole batch
#include "vector_ops.hpp"

#include <workbook/require.hpp>

#include <xsimd/xsimd.hpp>

namespace lab01 {

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  using Batch = xsimd::batch<float>;
  workbook::require_elementwise("multiply", a, "a", out, "out");
  workbook::require_elementwise("multiply", b, "b", out, "out");
  const std::size_t n = a.size();
  std::size_t i = 0;
  for (; i + Batch::size <= n; i += Batch::size)
    (Batch::load_unaligned(&a[i]) * Batch::load_unaligned(&b[i])).store_unaligned(&out[i]);
  if (i < n && n >= Batch::size) {  // no scalar loop: one more batch that ends at n
    const std::size_t last = n - Batch::size;
    (Batch::load_unaligned(&a[last]) * Batch::load_unaligned(&b[last])).store_unaligned(&out[last]);
    i = n;
  }
  for (; i < n; ++i) out[i] = a[i] * b[i];
}

}  // namespace lab01
