// Mistake: the SIMD loop's bound is off by one batch (i + lanes < n), and the tail starts at
// n - n % lanes: when n is a multiple of the batch, the last batch is never written. At n = one
// batch nothing is written at all, which alone says nothing; the larger sizes show the pattern.
// Checked by: Relu.MatchesOracleAtEverySize
// Expect: your SIMD loop stops one batch early
// Expect: Every size that failed is a multiple of
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  using Batch = xsimd::batch<float>;
  const Batch zero(0.0f);
  for (std::size_t i = 0; i + Batch::size < x.size(); i += Batch::size)
    xsimd::select(Batch::load_unaligned(&x[i]) <= zero, zero, Batch::load_unaligned(&x[i]))
        .store_unaligned(&y[i]);
  for (std::size_t i = x.size() - x.size() % Batch::size; i < x.size(); ++i)
    y[i] = x[i] <= 0 ? 0.0f : x[i];
}

}  // namespace lab01
