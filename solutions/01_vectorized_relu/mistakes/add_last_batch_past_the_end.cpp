// Mistake: whole batches up to n, no tail: the last batch reads and writes past the end.
// Checked by: Add.MatchesOracleAtEverySize
// Expect: wrote past the end of the output
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  using Batch = xsimd::batch<float>;
  for (std::size_t i = 0; i < a.size(); i += Batch::size)
    (Batch::load_unaligned(&a[i]) + Batch::load_unaligned(&b[i])).store_unaligned(&out[i]);
}

}  // namespace lab01
