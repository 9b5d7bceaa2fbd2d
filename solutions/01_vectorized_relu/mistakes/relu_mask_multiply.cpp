// Mistake: the branchless x * (x > 0): -inf * 0 is NaN.
// Checked by: Relu.SpecialValues
// Expect: your output matches x * (x > 0), which makes -inf into NaN
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  using Batch = xsimd::batch<float>;
  const Batch zero(0.0f), one(1.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    (v * xsimd::select(v > zero, one, zero)).store_unaligned(&y[i]);
  }
  for (; i < x.size(); ++i) y[i] = x[i] * static_cast<float>(x[i] > 0);
}

}  // namespace lab01
