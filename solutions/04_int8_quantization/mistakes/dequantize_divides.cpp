// Mistake: q / scale, the division of quantize, not its inverse.
// Checked by: Dequantize.MatchesOracleAtEverySize
// Expect: your output matches q / scale, not q * scale
#include "quantize.hpp"

namespace lab04 {

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> x) {
  for (std::size_t i = 0; i < q.size(); ++i) x[i] = q[i] / scale;
}

}  // namespace lab04
