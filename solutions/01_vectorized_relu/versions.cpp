// The steps between v1 (versions_scalar.cpp) and the reference (vector_ops.cpp).
#include "versions.hpp"

#include "simd_loops.hpp"

namespace lab01::versions {

using loops::Batch;

void relu_v2_autovectorized(std::span<const float> x, std::span<float> y) {
  // The same loop as v1; at -O3 -march=native GCC turns it into SIMD code by itself. Compare its
  // speed with v3: for a loop this simple, the compiler does as well as xsimd.
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] <= 0.0f ? 0.0f : x[i];
}

void relu_v3_xsimd(std::span<const float> x, std::span<float> y) {
  // The handout's step 1: whole batches, then a scalar tail.
  const Batch zero(0.0f);
  std::size_t i = 0;
  for (; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    xsimd::select(v <= zero, zero, v).store_unaligned(&y[i]);
  }
  for (; i < x.size(); ++i) y[i] = x[i] <= 0.0f ? 0.0f : x[i];
}

template <std::size_t Accumulators>
float dot_with(std::span<const float> a, std::span<const float> b) {
  return loops::reduce<Accumulators>(
      a.size(),
      [&](Batch acc, std::size_t i) {
        return xsimd::fma(Batch::load_unaligned(&a[i]), Batch::load_unaligned(&b[i]), acc);
      },
      [&](std::size_t i) { return a[i] * b[i]; });
}

float dot_v2_one_accumulator(std::span<const float> a, std::span<const float> b) {
  return dot_with<1>(a, b);
}
float dot_v3_two_accumulators(std::span<const float> a, std::span<const float> b) {
  return dot_with<2>(a, b);
}
float dot_v5_eight_accumulators(std::span<const float> a, std::span<const float> b) {
  return dot_with<8>(a, b);
}

}  // namespace lab01::versions
