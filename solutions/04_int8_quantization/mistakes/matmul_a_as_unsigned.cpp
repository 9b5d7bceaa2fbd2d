// Mistake: vpdpbusd's unsigned first operand fed signed A as it is: -1 counts as 255.
// Checked by: MatmulInt8.EverySmallShape
// Expect: your output matches A read as unsigned bytes
#include "quantize.hpp"

namespace lab04 {

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  const auto* ua = reinterpret_cast<const std::uint8_t*>(a.data());
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      for (std::size_t k = 0; k < depth; ++k) sum += ua[i * depth + k] * b[j * depth + k];
      c[i * n + j] = sum;
    }
}

}  // namespace lab04
