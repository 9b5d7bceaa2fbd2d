// Mistake: the scale taken for max |x|: q * scale / 127.
// Checked by: Dequantize.MatchesOracleAtEverySize
// Expect: your output matches q * scale / 127, as if the scale were max |x|
#include "quantize.hpp"

namespace lab04 {

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> x) {
  for (std::size_t i = 0; i < q.size(); ++i) x[i] = q[i] * scale / 127.0f;
}

}  // namespace lab04
