// Mistake: a lane count of 4 written in the code (an SSE register's) while each batch holds
// Batch::size floats: the last batch stores past the end.
// Checked by: SquaredDifference.MatchesOracleAtEverySize
// Expect: wrote past the end of the output
// Expect: steps by a lane count of 4 written in the code
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void squared_difference(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  using Batch = xsimd::batch<float>;
  constexpr std::size_t kWidth = 4;
  std::size_t i = 0;
  for (; i + kWidth <= a.size(); i += kWidth) {
    const Batch d = Batch::load_unaligned(&a[i]) - Batch::load_unaligned(&b[i]);
    (d * d).store_unaligned(&out[i]);
  }
  for (; i < a.size(); ++i) out[i] = (a[i] - b[i]) * (a[i] - b[i]);
}

}  // namespace lab01
