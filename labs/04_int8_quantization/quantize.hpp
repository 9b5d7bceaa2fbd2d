#pragma once
/// \file quantize.hpp
/// \brief Lab 04: int8 quantization, the interface you implement in quantize.cpp. Read README.md
/// (the handout) first.
///
/// Symmetric quantization maps a float x to an integer q in [-127, 127] with one positive float,
/// the scale: q = saturate(round(x / scale)), and back: x ~ q * scale. Zero maps to zero exactly
/// (there is no zero point), and -128 is never produced, so that the range is symmetric.
///
/// Mismatched sizes, a scale that is not a positive finite number, and NaN inputs throw
/// std::invalid_argument with a message that names the function and the problem. The size checks
/// are already written in the stub (quantize_checks.hpp); the NaN checks are yours.

#include <cstddef>
#include <cstdint>
#include <span>

namespace lab04 {

/// The largest magnitude a quantized value takes: the range is [-kQuantMax, kQuantMax].
inline constexpr int kQuantMax = 127;

/// The largest depth K for which a sum of K products of values in [-127, 127] cannot overflow
/// int32: floor((2^31 - 1) / 127^2) = 133143. (An int16 sum of such products overflows at K = 3.)
inline constexpr std::size_t kMaxDepth = 133'143;

/// The scale of symmetric per-tensor quantization: max |x_i| / 127, computed in float32, so that
/// the largest magnitude maps to +-127. When that is 0 (an empty or all-zero tensor, or values so
/// tiny that the quotient underflows) the scale is 1: every value then quantizes to 0, and any
/// positive scale would do; 1 keeps dequantization exact and never divides by zero.
///
/// Throws std::invalid_argument naming the first NaN or infinity (neither has a finite scale).
float symmetric_scale(std::span<const float> x);

/// q[i] = saturate(round_half_to_even(x[i] / scale)), with x[i] / scale computed in float32 and
/// saturate clamping to [-127, 127]: a value beyond +-127.5 * scale, +-infinity included, becomes
/// +-127 (never wraps around, never becomes -128). Ties go to the even neighbour: 2.5 -> 2,
/// 3.5 -> 4, -0.5 -> 0, 127.5 -> 128 -> saturated to 127.
///
/// Computing x[i] * (1 / scale) instead of x[i] / scale is accepted: it can differ only where the
/// quotient lies within two roundings of a tie, and the tests allow either neighbour there.
///
/// Throws std::invalid_argument naming the first NaN in x (a NaN has no integer value); q is then
/// unspecified. Throws when scale is not a positive finite number, or the sizes differ.
void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q);

/// x[i] = q[i] * scale, rounded once to float32. Throws when scale is not a positive finite
/// number, or the sizes differ.
void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> x);

/// Per-row quantization of a row-major matrix with `cols` columns (x.size() / cols rows): row r
/// gets its own scale, scales[r] = symmetric_scale(row r), and q row r = quantize(row r,
/// scales[r]). One large value then costs precision only in its own row. Throws on NaN or infinity,
/// and when x.size() is not a multiple of cols, or scales and q do not match x.
void quantize_rows(std::span<const float> x, std::size_t cols, std::span<float> scales,
                   std::span<std::int8_t> q);

/// out[i] = max(q[i], 0): ReLU in the int8 domain. With symmetric quantization zero is the integer
/// 0, so this is exactly relu(q[i] * scale) / scale with the same scale: no dequantization needed.
/// out may be q itself (in place), but not a shifted view of it.
void quantized_relu(std::span<const std::int8_t> q, std::span<std::int8_t> out);

/// The exact integer product C = A * B^T: c[i * n + j] = sum over k of a[i * depth + k] *
/// b[j * depth + k], accumulated in int32.
///
/// Layout, all row-major and contiguous: A is m x depth, B is n x depth (each row of B is one
/// column of the product, as the weight of a linear layer y = x W^T is stored in PyTorch), C is
/// m x n and is overwritten. Both operands are read along the depth, so both can be quantized
/// per row.
///
/// Values must lie in [-127, 127] (what quantize produces; -128 throws) and depth must be at most
/// kMaxDepth: then no sum can overflow int32 and the result is exact, whatever the order of
/// summation. Throws std::invalid_argument otherwise, or when the sizes do not match.
void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth);

/// A quantized matrix: rows x cols int8 values (row-major, contiguous) and their scales: one for
/// the whole matrix (per tensor) or one per row (per row, as quantize_rows makes them).
struct QuantizedMatrix {
  std::span<const std::int8_t> values;
  std::span<const float> scales;
  std::size_t rows = 0;
  std::size_t cols = 0;

  /// The scale of row r.
  float scale(std::size_t r) const { return scales.size() == 1 ? scales[0] : scales[r]; }
};

/// The float32 product of two quantized matrices, C = A * B^T with the layout of matmul_int8:
/// c[i * b.rows + j] = a.scale(i) * b.scale(j) * (the exact int32 sum over k of a_ik * b_jk).
/// a.cols and b.cols are the depth. C (a.rows x b.rows) is overwritten.
///
/// Throws std::invalid_argument when the shapes do not match, a scales span has neither 1 nor
/// `rows` elements, a scale is not positive and finite, or as matmul_int8 does.
void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c);

}  // namespace lab04
