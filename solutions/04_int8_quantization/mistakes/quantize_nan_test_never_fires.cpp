// Mistake: the SIMD loop tests for NaN with v != v, which xsimd 8.1 compares "ordered": false for
// NaN, so no whole batch ever reports one; only the scalar tail (std::isnan) does.
// Checked by: Quantize.RejectsNaNAnywhere
// Expect: the SIMD loop's NaN test never fires
#include "../gcc_avx512_warnings.hpp"  // first: GCC 12 warns inside its AVX-512 headers

#include "quantize.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include <xsimd/xsimd.hpp>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  using Batch = xsimd::batch<float>;
  const Batch inverse(1.0f / scale), lo(-127.0f), hi(127.0f);
  auto nan = Batch(0.0f) != Batch(0.0f);  // no lane set
  std::size_t i = 0;
  for (; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch v = Batch::load_unaligned(&x[i]);
    nan = nan || (v != v);  // the mistake: xsimd::isnan(v)
    const Batch r = xsimd::nearbyint(v * inverse);
    const Batch clamped = xsimd::select(r < lo, lo, xsimd::select(r > hi, hi, r));
    for (std::size_t lane = 0; lane < Batch::size; ++lane)
      q[i + lane] = static_cast<std::int8_t>(clamped.get(lane));
  }
  if (xsimd::any(nan)) throw std::invalid_argument("quantize: x holds a NaN");
  for (; i < x.size(); ++i) {
    if (std::isnan(x[i]))
      throw std::invalid_argument("quantize: x holds a NaN at index " + std::to_string(i));
    q[i] = static_cast<std::int8_t>(std::fmin(std::fmax(std::nearbyint(x[i] / scale), -127), 127));
  }
}

}  // namespace lab04
