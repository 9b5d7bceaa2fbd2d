// Mistake: matmul_int8 sums the products in a float and casts the sum to int32: exact only up to
// 2^24.
// Checked by: MatmulInt8.SumsBeyondInt16AreExact
// Expect: your output matches the sum accumulated in float32
// Expect: accumulate in std::int32_t
// Lab 04: my implementation (scalar first; the scale is vectorised).
#include "../gcc_avx512_warnings.hpp"  // first: GCC 12 warns inside its AVX-512 headers

#include "quantize.hpp"
#include "quantize_checks.hpp"

#include <workbook/require.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

namespace lab04 {

template <class T>
using Batch = xsimd::batch<T>;

namespace {
[[noreturn]] void throw_not_finite(const char* function, std::size_t i) {
  throw std::invalid_argument(std::string(function) + ": x[" + std::to_string(i) +
                              "] is NaN or infinite");
}
}  // namespace

float symmetric_scale(std::span<const float> x) {
  const std::size_t n = x.size();
  using B = Batch<float>;
  B vmax(0.0f);
  std::size_t i = 0;
  for (; i + B::size <= n; i += B::size) {
    const B v = B::load_unaligned(&x[i]);
    if (xsimd::any(xsimd::isnan(v)) || xsimd::any(xsimd::isinf(v))) {
      for (std::size_t j = i; j < i + B::size; ++j)
        if (!std::isfinite(x[j])) throw_not_finite("symmetric_scale", j);
    }
    vmax = xsimd::max(vmax, xsimd::abs(v));
  }
  alignas(64) float lanes[B::size];
  vmax.store_aligned(lanes);
  float max_abs = *std::max_element(lanes, lanes + B::size);
  for (; i < n; ++i) {
    if (!std::isfinite(x[i])) throw_not_finite("symmetric_scale", i);
    max_abs = std::max(max_abs, std::fabs(x[i]));
  }
  const float scale = max_abs / 127.0f;
  return scale > 0.0f ? scale : 1.0f;
}

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  workbook::require_same_size("quantize", x.size(), "x", q.size(), "q");
  checks::require_scale("quantize", scale);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      throw std::invalid_argument("quantize: x[" + std::to_string(i) + "] is NaN");
    }
    float r = std::nearbyint(x[i] / scale);
    r = std::clamp(r, -127.0f, 127.0f);
    q[i] = static_cast<std::int8_t>(r);
  }
}

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> x) {
  workbook::require_same_size("dequantize", q.size(), "q", x.size(), "x");
  checks::require_scale("dequantize", scale);
  for (std::size_t i = 0; i < q.size(); ++i) x[i] = static_cast<float>(q[i]) * scale;
}

void quantize_rows(std::span<const float> x, std::size_t cols, std::span<float> scales,
                   std::span<std::int8_t> q) {
  const std::size_t rows =
      checks::require_rows("quantize_rows", x.size(), cols, scales.size(), q.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const auto row = x.subspan(r * cols, cols);
    scales[r] = symmetric_scale(row);
    quantize(row, scales[r], q.subspan(r * cols, cols));
  }
}

void quantized_relu(std::span<const std::int8_t> q, std::span<std::int8_t> out) {
  workbook::require_elementwise("quantized_relu", q, "q", out, "out");
  using B = Batch<std::int8_t>;
  const B zero(std::int8_t{0});
  const std::size_t n = q.size();
  std::size_t i = 0;
  for (; i + B::size <= n; i += B::size) {
    xsimd::max(B::load_unaligned(&q[i]), zero).store_unaligned(&out[i]);
  }
  for (; i < n; ++i) out[i] = q[i] > 0 ? q[i] : std::int8_t{0};
}

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  checks::require_int8_product("matmul_int8", a, b, c.size(), m, n, depth);
  for (std::size_t i = 0; i < m; ++i) {
    const std::int8_t* a_row = &a[i * depth];
    for (std::size_t j = 0; j < n; ++j) {
      const std::int8_t* b_row = &b[j * depth];
      float sum = 0.0f;
      for (std::size_t k = 0; k < depth; ++k) {
        sum += static_cast<float>(a_row[k]) * static_cast<float>(b_row[k]);
      }
      c[i * n + j] = static_cast<std::int32_t>(sum);
    }
  }
}

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  checks::require_quantized("quantized_matmul", a, "a");
  checks::require_quantized("quantized_matmul", b, "b");
  workbook::require_same_size("quantized_matmul", a.cols, "a.cols", b.cols, "b.cols");
  checks::require_matrix("quantized_matmul", c.size(), "c", a.rows, b.rows);
  std::vector<std::int32_t> acc(a.rows * b.rows);
  matmul_int8(a.values, b.values, acc, a.rows, b.rows, a.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < b.rows; ++j)
      c[i * b.rows + j] = a.scale(i) * b.scale(j) * static_cast<float>(acc[i * b.rows + j]);
}

}  // namespace lab04
