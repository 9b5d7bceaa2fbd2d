// Lab 04: your implementation. The handout, README.md, walks through each step.
//
// Build and test:  cmake --preset lab04 && ctest        (from the repository root)
// Each function below throws workbook::NotImplemented until you replace its TODO with a kernel.
#include "quantize.hpp"
#include "quantize_checks.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <xsimd/xsimd.hpp>

// AVX-512 intrinsics, for what xsimd 8.1 lacks: conversions between bytes and floats 16 lanes at a
// time (step 3) and the int8 dot product _mm512_dpbusd_epi32 (step 7, with __AVX512VNNI__). Keep
// every use behind #if, with a portable fallback. (GCC 12 may warn "may be used uninitialized"
// inside these headers: GCC bug 105593, harmless.)
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace lab04 {

// One SIMD register of floats for the instruction set this build targets (-march=native): 16 with
// AVX-512, 8 with AVX2. Batch<std::int8_t> holds 4 times as many lanes. Use ::size, never a number.
template <class T>
using Batch = xsimd::batch<T>;

float symmetric_scale(std::span<const float> x) {
  static_cast<void>(x);  // (the stub does not read x yet: delete this line)
  // TODO(lab04) step 1: the largest |x[i]| (a max-reduction, like lab 01's dot product, with
  // xsimd::abs and xsimd::max), divided by 127.0f; 1.0f when that is 0. Reject NaN and infinities
  // with std::invalid_argument naming the index. A NaN is never the max (comparisons with NaN are
  // false), so look for it explicitly: std::isnan, or xsimd::isnan on a batch (not v != v, which
  // xsimd 8.1 evaluates as an "ordered" comparison: false for NaN, unlike the scalar x != x).
  throw workbook::NotImplemented("symmetric_scale");
}

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  workbook::require_same_size("quantize", x.size(), "x", q.size(), "q");
  checks::require_scale("quantize", scale);
  // TODO(lab04) step 2: q[i] = clamp(std::nearbyint(x[i] / scale), -127, 127). std::nearbyint
  // rounds ties to even (the default rounding mode); a plain cast truncates toward zero and
  // std::round sends ties away from zero. Clamp before converting to int8: a cast of 200 wraps to
  // -56. Throw std::invalid_argument naming the first NaN. Then vectorise it (step 3).
  throw workbook::NotImplemented("quantize");
}

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> x) {
  workbook::require_same_size("dequantize", q.size(), "q", x.size(), "x");
  checks::require_scale("dequantize", scale);
  // TODO(lab04) step 2: x[i] = q[i] * scale.
  throw workbook::NotImplemented("dequantize");
}

void quantize_rows(std::span<const float> x, std::size_t cols, std::span<float> scales,
                   std::span<std::int8_t> q) {
  [[maybe_unused]] const std::size_t rows =
      checks::require_rows("quantize_rows", x.size(), cols, scales.size(), q.size());
  // TODO(lab04) step 4: for each of the rows, its own scale (symmetric_scale on the row's span,
  // x.subspan(r * cols, cols)), then quantize the row with it.
  throw workbook::NotImplemented("quantize_rows");
}

void quantized_relu(std::span<const std::int8_t> q, std::span<std::int8_t> out) {
  workbook::require_elementwise("quantized_relu", q, "q", out, "out");
  // TODO(lab04) step 5: out[i] = max(q[i], 0), with Batch<std::int8_t> (64 lanes with AVX-512).
  throw workbook::NotImplemented("quantized_relu");
}

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  checks::require_int8_product("matmul_int8", a, b, c.size(), m, n, depth);
  // TODO(lab04) step 6: c[i * n + j] = sum over k of a[i * depth + k] * b[j * depth + k], summed in
  // std::int32_t (never in int16: it overflows from depth 3 on). Correct first, with three loops;
  // then the dot products with vpdpbusd, then the register-blocked kernel (steps 7 and 8).
  throw workbook::NotImplemented("matmul_int8");
}

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  checks::require_quantized("quantized_matmul", a, "a");
  checks::require_quantized("quantized_matmul", b, "b");
  workbook::require_same_size("quantized_matmul", a.cols, "a.cols", b.cols, "b.cols");
  checks::require_matrix("quantized_matmul", c.size(), "c", a.rows, b.rows);
  // TODO(lab04) step 9: the int32 product of a.values and b.values (matmul_int8, which also checks
  // the range and the depth), then c[i * b.rows + j] = a.scale(i) * b.scale(j) * that sum, in
  // float.
  throw workbook::NotImplemented("quantized_matmul");
}

}  // namespace lab04
