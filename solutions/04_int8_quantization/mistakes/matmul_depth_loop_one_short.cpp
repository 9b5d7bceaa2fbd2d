// Mistake: the loop over the depth stops at depth - 1: every sum leaves out its last product.
// Seen first through quantized_matmul, whose error-model test must name it.
// Checked by: QuantizedMatmul.TypicalErrorFollowsTheModel
// Expect: the scales times every sum without its last product (the depth loop stopped at
#include "quantize.hpp"
#include "quantized_matmul_calls_matmul_int8.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      for (std::size_t k = 0; k + 1 < depth; ++k)
        sum += std::int32_t{a[i * depth + k]} * b[j * depth + k];
      c[i * n + j] = sum;
    }
}

}  // namespace lab04
