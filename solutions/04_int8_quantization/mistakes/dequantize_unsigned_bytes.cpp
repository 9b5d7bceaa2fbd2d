// Mistake: the bytes widened as unsigned (as _mm512_cvtepu8_epi32 does): -1 becomes 255.
// Checked by: Dequantize.MatchesOracleAtEverySize
// Expect: your output matches q read as unsigned bytes
#include "quantize.hpp"

namespace lab04 {

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> x) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(q.data());
  for (std::size_t i = 0; i < q.size(); ++i) x[i] = static_cast<float>(bytes[i]) * scale;
}

}  // namespace lab04
