// Mistake: whole batches of floats only; the last n % Batch::size values are never quantized.
// Checked by: Quantize.MatchesOracleAtEverySize
// Expect: never written
#include "../gcc_avx512_warnings.hpp"  // first: GCC 12 warns inside its AVX-512 headers

#include "quantize.hpp"

#include <xsimd/xsimd.hpp>

namespace lab04 {

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  using Batch = xsimd::batch<float>;
  const Batch inverse(1.0f / scale), lo(-127.0f), hi(127.0f);
  for (std::size_t i = 0; i + Batch::size <= x.size(); i += Batch::size) {
    const Batch r = xsimd::nearbyint(Batch::load_unaligned(&x[i]) * inverse);
    const Batch clamped = xsimd::select(r < lo, lo, xsimd::select(r > hi, hi, r));
    for (std::size_t lane = 0; lane < Batch::size; ++lane)
      q[i + lane] = static_cast<std::int8_t>(clamped.get(lane));
  }
}

}  // namespace lab04
