// Mistake: keep x where x > 0, else 0: false for NaN, so NaN becomes 0.
// Checked by: Relu.PropagatesNaN
// Expect: your output matches a ReLU that turns NaN into 0
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  using Batch = xsimd::batch<float>;
  const Batch zero(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    xsimd::select(v > zero, v, zero).store_unaligned(&y[i]);
  }
  for (; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
}

}  // namespace lab01
