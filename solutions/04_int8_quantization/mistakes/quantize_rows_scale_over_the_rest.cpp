// Mistake: each row's scale from x.subspan(r * cols), without its length: the scan runs from row r
// to the end of the matrix.
// Checked by: QuantizeRows.EachRowHasItsOwnScale
// Expect: the rows from r to the last, not row r alone
#include "quantize.hpp"

namespace lab04 {

void quantize_rows(std::span<const float> x, std::size_t cols, std::span<float> scales,
                   std::span<std::int8_t> q) {
  for (std::size_t r = 0; r < scales.size(); ++r) {
    scales[r] = symmetric_scale(x.subspan(r * cols));  // the mistake: subspan(r * cols, cols)
    quantize(x.subspan(r * cols, cols), scales[r], q.subspan(r * cols, cols));
  }
}

}  // namespace lab04
