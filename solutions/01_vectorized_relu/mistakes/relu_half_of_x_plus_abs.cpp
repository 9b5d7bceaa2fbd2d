// Mistake: the branchless (x + |x|) / 2 in float: x + |x| overflows to inf for x > FLT_MAX / 2, and
// -inf + inf is NaN.
// Checked by: Relu.SpecialValues
// Expect: (x + |x|) / 2 in float, which overflows to inf for |x| > FLT_MAX / 2
#include "vector_ops.hpp"

#include <cmath>

#include <xsimd/xsimd.hpp>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  using Batch = xsimd::batch<float>;
  const Batch half(0.5f);
  std::size_t i = 0;
  for (; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    ((v + xsimd::abs(v)) * half).store_unaligned(&y[i]);
  }
  for (; i < x.size(); ++i) y[i] = (x[i] + std::fabs(x[i])) * 0.5f;
}

}  // namespace lab01
