// Mistake: the scalar tail with its own index from 0 for the output: the last elements' sums land
// at the start.
// Checked by: Add.MatchesOracleAtEverySize
// Expect: your output matches the tail's results stored at the start of the output
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  using Batch = xsimd::batch<float>;
  const std::size_t full = a.size() - a.size() % Batch::size;
  for (std::size_t i = 0; i < full; i += Batch::size)
    (Batch::load_unaligned(&a[i]) + Batch::load_unaligned(&b[i])).store_unaligned(&out[i]);
  for (std::size_t j = 0; j < a.size() - full; ++j) out[j] = a[full + j] + b[full + j];
}

}  // namespace lab01
