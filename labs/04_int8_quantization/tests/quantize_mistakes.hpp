#pragma once
// The mistakes students of lab 04 make, each with the wrong answer it gives, computed exactly like
// the oracle (quantize_oracle.hpp): float32 where the specification itself is float32 (the scale,
// the quotient x / scale), exact integers for the integer product. When a check fails, the output
// is compared with every entry of the kernel's list, in order, before any generic pattern; the
// first that matches is named: "your output matches <what>: <advice>".
//
// int8 outputs: -128 is the harness's poison, so an element that holds -128 reads as unwritten.
// An entry whose wrong answer is -128 says NaN there instead ("unwritten or NaN"), which matches
// it.
#include "quantize.hpp"

#include <workbook/check.hpp>

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace lab04::mistakes {

using workbook::Mistake;

/// Batch::size of floats in this build: the scalar tail of a float loop is the last n % kLanes.
inline constexpr std::size_t kLanes = xsimd::batch<float>::size;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// An int8 wrong answer as a check compares it: -128, the poison, reads as unwritten (NaN).
inline double int8_answer(long v) {
  return v == -kQuantMax - 1 ? kNaN : static_cast<double>(v);
}

/// The int8 of a rounded quotient clamped to [lo, hi].
inline double clamped(double rounded, double lo = -kQuantMax, double hi = kQuantMax) {
  return int8_answer(static_cast<long>(std::clamp(rounded, lo, hi)));
}

// --- symmetric_scale -----------------------------------------------------------------------------

/// max |x_i| over x[first, last).
inline float largest_magnitude(std::span<const float> x, std::size_t first, std::size_t last) {
  float largest = 0;
  for (std::size_t i = first; i < last; ++i) largest = std::max(largest, std::fabs(x[i]));
  return largest;
}

/// A scale with the rule for an all-zero tensor (1 when the quotient is 0), as each wrong formula
/// below still applies it.
inline double or_one(float scale) {
  return scale > 0 ? scale : 1.0;
}

/// Wrong scales of the tensor x; answer(0) is the scale returned.
inline std::vector<Mistake> symmetric_scale(std::span<const float> x) {
  const float largest = largest_magnitude(x, 0, x.size());
  float largest_signed = 0;
  for (const float v : x) largest_signed = std::max(largest_signed, v);
  const float full_batches = largest_magnitude(x, 0, x.size() - x.size() % kLanes);
  auto scale = [](double s) { return [s](std::size_t) { return s; }; };
  return {
      {"max |x| / 127 = 0, with no special case",
       "an all-zero tensor (or values so tiny that max |x| / 127 underflows) gets a scale of 0, "
       "and "
       "quantize would then divide by zero. quantize.hpp defines the scale as 1 there: return 1 "
       "when the quotient is 0.",
       scale(largest / static_cast<float>(kQuantMax))},
      {"1, as if the tensor were all zeros",
       "max |x| missed the values that matter. Both mistakes give 1 here: the tail after the last "
       "full batch left out, and max x taken instead of max |x| (every value is negative). Reduce "
       "over every element, tail included, with the absolute value (xsimd::abs, std::fabs).",
       scale(full_batches == 0 && largest_signed <= 0 && largest > 0 ? 1.0 : kNaN)},
      {"max |x| over the full batches only, over 127",
       "the last n % " + std::to_string(kLanes) +
           " elements (the tail after the last full batch) never reach the max: finish the "
           "reduction with a scalar loop over them.",
       scale(or_one(full_batches / static_cast<float>(kQuantMax)))},
      {"the largest x, not the largest |x|, over 127",
       "a tensor whose largest magnitude is negative then saturates. Take the absolute value "
       "before the max (xsimd::abs, std::fabs).",
       scale(or_one(largest_signed / static_cast<float>(kQuantMax)))},
      {"the max started from x[0], not |x[0]|",
       "a negative x[0] never counts: start the running max at 0 (or at |x[0]|), so that every "
       "element enters it as its magnitude.",
       scale(or_one(std::max(x.empty() ? 0.0f : x[0], largest_magnitude(x, 1, x.size())) /
                    static_cast<float>(kQuantMax)))},
      {"max |x| / 128",
       "the symmetric range is [-127, 127]: divide by 127, so that the largest magnitude maps to "
       "exactly 127 (-128 is never used).",
       scale(or_one(largest / 128.0f))},
      {"max |x| itself, not divided by 127",
       "the scale is the size of one step: max |x| / 127, so that the largest magnitude maps to "
       "127.",
       scale(or_one(largest))},
      {"max |x| * (1 / 127), one unit in the last place off",
       "multiplying by 1/127 rounds twice (the reciprocal, then the product): divide by 127.0f, "
       "which rounds once.",
       scale(or_one(largest * (1.0f / static_cast<float>(kQuantMax))))},
  };
}

/// quantize_rows' scales, row r of a matrix with `cols` columns: the whole matrix's scale.
inline std::vector<Mistake> row_scale(std::span<const float> whole) {
  const double per_tensor = or_one(largest_magnitude(whole, 0, whole.size()) / 127.0f);
  return {{"the scale of the whole matrix, the same for every row",
           "that is per-tensor quantization: quantize_rows gives each row its own scale, "
           "symmetric_scale of that row alone, so that one large value costs precision only in "
           "its own row.",
           [per_tensor](std::size_t) { return per_tensor; }}};
}

// --- quantize ------------------------------------------------------------------------------------

/// Wrong quantizations of x, element i with scale scale_of(i).
inline std::vector<Mistake> quantize(std::span<const float> x,
                                     std::function<float(std::size_t)> scale_of) {
  auto quotient = [x, scale_of](std::size_t i) { return static_cast<double>(x[i] / scale_of(i)); };
  return {
      {"x / scale rounded half away from zero (std::round)",
       "ties must go to the even neighbour (2.5 -> 2, 3.5 -> 4): use std::nearbyint (or "
       "xsimd::nearbyint), which rounds half to even in the default rounding mode.",
       [=](std::size_t i) { return clamped(std::round(quotient(i))); }},
      {"x / scale truncated toward zero, not rounded",
       "a conversion from float to int truncates (static_cast, xsimd::batch_cast), and adding 0.5 "
       "first rounds only the positive values: round with std::nearbyint (or "
       "xsimd::nearbyint_as_int), then convert.",
       [=](std::size_t i) { return clamped(std::trunc(quotient(i))); }},
      {"(int)(x / scale + 0.5): negative values rounded toward zero",
       "adding 0.5 and converting rounds only positive values: a conversion to int truncates "
       "toward zero, so -1.7 + 0.5 becomes -1, not -2. Round with std::nearbyint, then convert.",
       [=](std::size_t i) {
         return clamped(std::trunc(static_cast<double>(static_cast<float>(quotient(i)) + 0.5f)));
       }},
      {"round(x / scale) without saturation: the cast to int8 wraps around",
       "a cast to int8 keeps the low 8 bits (200 becomes -56). Clamp the rounded value to "
       "[-127, 127] before converting.",
       [=](std::size_t i) {
         // x86's conversion gives INT32_MIN beyond the int32 range; its low byte is 0.
         const double r = std::nearbyint(quotient(i));
         if (!(std::fabs(r) < 0x1p31)) return 0.0;
         return int8_answer(static_cast<std::int8_t>(static_cast<std::int32_t>(r)));
       }},
      {"round(x / scale) clamped to [-128, 127]",
       "the symmetric range is [-127, 127]: clamp to -127, not -128, so that q and -q are both "
       "representable.",
       [=](std::size_t i) { return clamped(std::nearbyint(quotient(i)), -kQuantMax - 1); }},
      {"x * scale, not x / scale",
       "quantization divides by the scale (the size of one step): q = round(x / scale); "
       "dequantize multiplies.",
       [=](std::size_t i) {
         return clamped(std::nearbyint(static_cast<double>(x[i] * scale_of(i))));
       }},
  };
}

// --- dequantize ----------------------------------------------------------------------------------

inline std::vector<Mistake> dequantize(std::span<const std::int8_t> q, float scale) {
  return {
      {"q / scale, not q * scale", "dequantize undoes quantize's division: x = q * scale.",
       [=](std::size_t i) { return static_cast<double>(q[i]) / scale; }},
      {"q read as unsigned bytes: each negative q 256 too large",
       "the bytes were widened as unsigned (a uint8_t load, or _mm512_cvtepu8_epi32): widen them "
       "as signed int8 (_mm512_cvtepi8_epi32), so that -1 stays -1, not 255.",
       [=](std::size_t i) { return static_cast<double>(static_cast<std::uint8_t>(q[i])) * scale; }},
  };
}

// --- quantized_relu ------------------------------------------------------------------------------

inline std::vector<Mistake> quantized_relu(std::span<const std::int8_t> q) {
  return {{"q unchanged: a max over unsigned bytes",
           "as unsigned bytes every value is >= 0 (-1 is 255), so max(q, 0) keeps everything: "
           "compare as signed int8 (xsimd::batch<std::int8_t>).",
           [=](std::size_t i) { return static_cast<double>(q[i]); }}};
}

// --- matmul_int8 ---------------------------------------------------------------------------------

/// Wrong integer products c (m x n) of a (m x depth) and b (n x depth).
inline std::vector<Mistake> matmul_int8(std::span<const std::int8_t> a,
                                        std::span<const std::int8_t> b, std::size_t n,
                                        std::size_t depth) {
  auto sum = [=](std::size_t i, std::size_t j, std::size_t last, auto product) {
    std::int64_t s = 0;
    for (std::size_t k = 0; k < last; ++k) s += product(a[i * depth + k], k, j);
    return s;
  };
  auto times_bt = [=](std::int64_t ak, std::size_t k, std::size_t j) {
    return ak * b[j * depth + k];
  };
  std::vector<Mistake> list = {
      {"(a + 128) * b without the correction: off by 128 * sum_k b[j][k]",
       "adding 128 to A makes it unsigned for vpdpbusd, and adds 128 * (the sum of row j of B) to "
       "every c[i][j]: subtract it (the handout's offset correction, from sums of B's rows).",
       [=](std::size_t e) {
         return static_cast<double>(
             sum(e / n, e % n, depth, [=](std::int8_t ak, std::size_t k, std::size_t j) {
               return (ak + 128) * std::int64_t{b[j * depth + k]};
             }));
       }},
      {"A read as unsigned bytes: each negative a[i][k] 256 too large",
       "vpdpbusd (_mm512_dpbusd_epi32) multiplies unsigned bytes of its first operand by signed "
       "bytes of its second: add 128 to A to make it unsigned, then subtract 128 * (the sum of "
       "row j of B) (the handout's offset correction).",
       [=](std::size_t e) {
         return static_cast<double>(
             sum(e / n, e % n, depth, [=](std::int8_t ak, std::size_t k, std::size_t j) {
               return std::int64_t{static_cast<std::uint8_t>(ak)} * b[j * depth + k];
             }));
       }},
      {"the sum kept in int16, wrapping around past 32767",
       "127 * 127 * 3 = 48387 already overflows int16: accumulate in std::int32_t (widen the "
       "products before adding them).",
       [=](std::size_t e) {
         return static_cast<double>(
             static_cast<std::int16_t>(sum(e / n, e % n, depth, times_bt) & 0xFFFF));
       }},
      {"A * B with B read as depth x n: c[i][j] = sum_k a[i][k] * b[k][j]",
       "here B is n x depth (row j of B is column j of the product, as a linear layer's weight): "
       "c[i][j] is the dot product of row i of A with row j of B, b[j * depth + k].",
       [=](std::size_t e) {
         return static_cast<double>(
             sum(e / n, e % n, depth, [=](std::int8_t ak, std::size_t k, std::size_t j) {
               return std::int64_t{ak} * b[k * n + j];
             }));
       }},
  };
  // A depth loop in blocks of w without a remainder loop: the last depth % w products are lost.
  std::vector<std::size_t> dropped;
  for (std::size_t w : {4, 8, 16, 32, 64}) {
    const std::size_t r = depth % w;
    if (r == 0 || std::find(dropped.begin(), dropped.end(), r) != dropped.end()) continue;
    dropped.push_back(r);
    list.push_back({"every sum without its last " + std::to_string(r) + " product" +
                        (r == 1 ? "" : "s") + " (depth " + std::to_string(depth) + ")",
                    "the depth loop handles whole blocks only, and depth is not a multiple of "
                    "the block: add a scalar loop over the remaining products of each sum.",
                    [=](std::size_t e) {
                      return static_cast<double>(sum(e / n, e % n, depth - r, times_bt));
                    }});
  }
  return list;
}

// --- quantized_matmul ----------------------------------------------------------------------------

/// Wrong float products of quantized matrices: element e = (i, j) of a.rows x b.rows, with
/// exact(e) the exact integer sum.
inline std::vector<Mistake> quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b,
                                             std::function<double(std::size_t)> exact) {
  const std::size_t n = b.rows;
  return {
      {"the first scale of each matrix for every row (per-tensor, not per-row)",
       "with one scale per row, row i of A has a.scale(i) and row j of B b.scale(j): use "
       "QuantizedMatrix::scale(r), which also handles a single per-tensor scale.",
       [=](std::size_t e) {
         return static_cast<double>(a.scales[0]) * static_cast<double>(b.scales[0]) * exact(e);
       }},
      {"the integer sums without the scales",
       "c[i][j] = a.scale(i) * b.scale(j) * (the int32 sum): the scales turn the integer product "
       "back into real values.",
       exact},
      {"the integer sums divided by the scales",
       "dequantizing multiplies by the scales: c[i][j] = a.scale(i) * b.scale(j) * (the int32 "
       "sum).",
       [=](std::size_t e) {
         return exact(e) / (static_cast<double>(a.scale(e / n)) * b.scale(e % n));
       }},
  };
}

}  // namespace lab04::mistakes
