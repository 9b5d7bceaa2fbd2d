// v1 of each kernel: plain loops, compiled with the compiler's auto-vectoriser switched off (see
// CMakeLists.txt), as the baseline every SIMD version is measured against.
#include "naive_loops.hpp"
#include "versions.hpp"

#include "quantize_checks.hpp"

#include <workbook/require.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace lab04::versions {

void matmul_v1_scalar(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                      std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  checks::require_int8_product("matmul_int8", a, b, c.size(), m, n, depth);
  naive_product(a, b, c, m, n, depth);
}

void quantize_v1_scalar(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  workbook::require_same_size("quantize", x.size(), "x", q.size(), "q");
  checks::require_scale("quantize", scale);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]))
      throw std::invalid_argument("quantize: x[" + std::to_string(i) + "] is NaN");
    q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(x[i] / scale), -127.0f, 127.0f));
  }
}

void dequantize_v1_scalar(std::span<const std::int8_t> q, float scale, std::span<float> x) {
  workbook::require_same_size("dequantize", q.size(), "q", x.size(), "x");
  checks::require_scale("dequantize", scale);
  for (std::size_t i = 0; i < q.size(); ++i) x[i] = static_cast<float>(q[i]) * scale;
}

}  // namespace lab04::versions
