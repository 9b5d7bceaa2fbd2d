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

#include <workbook/buffer.hpp>
#include <workbook/check.hpp>

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
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

/// `list` with each entry that gives the same answer as an earlier one on every one of the `count`
/// elements of this check merged into that one: the output cannot tell them apart (a single
/// product with negative a's, an input made only of ties), and then the message says both.
inline std::vector<Mistake> merge_alike(std::vector<Mistake> list, std::size_t count) {
  if (count == 0) return list;  // nothing to compare them on
  auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  std::vector<std::vector<double>> answers;
  std::vector<Mistake> merged;
  for (Mistake& m : list) {
    std::vector<double> answer(count);
    for (std::size_t i = 0; i < count; ++i) answer[i] = m.answer(i);
    std::size_t k = 0;
    while (k < merged.size() && !std::equal(answer.begin(), answer.end(), answers[k].begin(), same))
      ++k;
    if (k == merged.size()) {
      answers.push_back(std::move(answer));
      merged.push_back(std::move(m));
      continue;
    }
    merged[k].what += " (on these inputs, the same as " + m.what + ")";
    merged[k].advice += " Or, for the other: " + m.advice;
  }
  return merged;
}

// --- symmetric_scale -----------------------------------------------------------------------------

/// Where the whole SIMD batches of n elements end, and the scalar tail starts.
inline std::size_t full_batches_end(std::size_t n) {
  return n - n % kLanes;
}

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
  // max |x| without lane `lane` of the whole batches: a horizontal max that skips one lane.
  const auto all_but_lane = [&](std::size_t lane) {
    float m = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (i >= full_batches_end(x.size()) || i % kLanes != lane) m = std::max(m, std::fabs(x[i]));
    return m;
  };
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
      {"the max started from std::numeric_limits<float>::min() (the smallest positive normal "
       "float, 1.2e-38), not 0: FLT_MIN / 127 where every |x| is smaller",
       "numeric_limits<float>::min() is the smallest positive normal value, not the most "
       "negative one (that is lowest()): start a max of magnitudes at 0.",
       scale(or_one(std::max(largest, std::numeric_limits<float>::min()) /
                    static_cast<float>(kQuantMax)))},
      {"the max started from x[0], not |x[0]|",
       "a negative x[0] never counts: start the running max at 0 (or at |x[0]|), so that every "
       "element enters it as its magnitude.",
       scale(or_one(std::max(x.empty() ? 0.0f : x[0], largest_magnitude(x, 1, x.size())) /
                    static_cast<float>(kQuantMax)))},
      // A lane left out gives what the two entries before it give where the largest magnitude is
      // x[0] or a negative value in that lane: where one case alone fails, the narrower one wins.
      {"max |x| over every element but lane 0 of each whole batch (i % " + std::to_string(kLanes) +
           " == 0), over 127",
       "the reduction of the max batch's lanes skips lane 0: a loop over the lanes that starts at "
       "1 (as if lane 0 were already in the running max, which starts at 0) leaves out every "
       "element at a multiple of " +
           std::to_string(kLanes) +
           ". Reduce over every lane (xsimd::reduce_max, or a loop from lane 0).",
       scale(or_one(all_but_lane(0) / static_cast<float>(kQuantMax)))},
      {"max |x| over every element but the last lane of each whole batch, over 127",
       "the reduction of the max batch's lanes stops one lane early (l < " +
           std::to_string(kLanes - 1) + ", or l + 1 < size): lane " + std::to_string(kLanes - 1) +
           " never reaches the max. Reduce over every lane (xsimd::reduce_max).",
       scale(or_one(all_but_lane(kLanes - 1) / static_cast<float>(kQuantMax)))},
      {"max |x| / 128",
       "the symmetric range is [-127, 127]: divide by 127, so that the largest magnitude maps to "
       "exactly 127 (-128 is never used).",
       scale(or_one(largest / 128.0f))},
      {"max |x| / 255, the number of steps of uint8",
       "the symmetric int8 range is [-127, 127]: the scale is max |x| / 127, so that the largest "
       "magnitude maps to 127. Dividing by 255 maps it to 63.5: half the range goes unused.",
       scale(or_one(largest / 255.0f))},
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

/// Wrong scales of quantize_rows for the matrix `whole` with `cols` columns: answer(r) is row r's.
/// Matched against every row at once, so that one row's coincidence does not name a mistake.
inline std::vector<Mistake> row_scales(std::span<const float> whole, std::size_t cols) {
  auto scale_of = [whole](std::size_t first, std::size_t last) {
    return or_one(largest_magnitude(whole, first, std::min(last, whole.size())) / 127.0f);
  };
  const double per_tensor = scale_of(0, whole.size()), first_row = scale_of(0, cols);
  // The scales over rows r to the last, and over rows 0 to r, from each row's max |x| (once: a
  // scan per row would be quadratic in the rows).
  const std::size_t rows = cols ? whole.size() / cols : 0;
  std::vector<float> row_max(rows);
  for (std::size_t r = 0; r < rows; ++r)
    row_max[r] = largest_magnitude(whole, r * cols, (r + 1) * cols);
  std::vector<double> suffix(rows), prefix(rows);
  float running = 0;
  for (std::size_t r = rows; r-- > 0;)
    suffix[r] = or_one((running = std::max(running, row_max[r])) / 127.0f);
  running = 0;
  for (std::size_t r = 0; r < rows; ++r)
    prefix[r] = or_one((running = std::max(running, row_max[r])) / 127.0f);
  return {{"the scale of the whole matrix, the same for every row",
           "that is per-tensor quantization: quantize_rows gives each row its own scale, "
           "symmetric_scale of that row alone, so that one large value costs precision only in "
           "its own row.",
           [per_tensor](std::size_t) { return per_tensor; }},
          {"the scale of row 0, the same for every row",
           "each row's scale comes from that row: symmetric_scale of x[r * cols, (r + 1) * cols).",
           [first_row](std::size_t) { return first_row; }},
          {"the scale of x[r, r + cols) for row r: the row's start without '* cols'",
           "row r starts at x[r * cols]: take symmetric_scale of x.subspan(r * cols, cols).",
           [scale_of, cols](std::size_t r) { return scale_of(r, r + cols); }},
          // A span with its start right and its length wrong: to the end, or from the start.
          {"the scale of x[r * cols, end) for row r: the rows from r to the last, not row r alone "
           "(a one-argument subspan(r * cols) runs to the end of the matrix)",
           "a row's scan covers cols elements: x.subspan(r * cols, cols), with its length.",
           [suffix](std::size_t r) { return r < suffix.size() ? suffix[r] : kNaN; }},
          {"the scale of x[0, (r + 1) * cols) for row r: every row up to r, not row r alone (the "
           "scan starts at 0, or its running maximum is not reset for each row)",
           "start each row's scan at its own first element, x[r * cols], with the maximum reset "
           "to 0 for every row.",
           [prefix](std::size_t r) { return r < prefix.size() ? prefix[r] : kNaN; }},
          // Each row given a neighbour's scale (the scan one row behind or ahead of the row).
          {"the scale of row r - 1 for every row r after the first (each row's scale scanned "
           "from the row before it)",
           "the scale of row r comes from row r itself: scan x[r * cols, (r + 1) * cols) for row "
           "r, with the same r as the row you then quantize (check the row index of the scan "
           "against the row index of the store).",
           [scale_of, cols](std::size_t r) {
             const std::size_t from = r > 0 ? r - 1 : 0;
             return scale_of(from * cols, (from + 1) * cols);
           }},
          {"the scale of row r + 1 for every row r before the last (each row's scale scanned "
           "from the row after it)",
           "the scale of row r comes from row r itself: scan x[r * cols, (r + 1) * cols) for row "
           "r, with the same r as the row you then quantize (check the row index of the scan "
           "against the row index of the store).",
           [scale_of, cols, rows](std::size_t r) {
             const std::size_t from = r + 1 < rows ? r + 1 : r;
             return scale_of(from * cols, (from + 1) * cols);
           }}};
}

// --- quantize ------------------------------------------------------------------------------------

/// Wrong quantizations of x, element i with scale scale_of(i).
/// Wrong quantizations of x, element i with scale scale_of(i); `got` is the output checked. A
/// rounded quotient beyond the int32 range has two wrong answers, whichever the code does: clamped
/// as a float first (+-127), or converted to int first, which overflows (x86 gives INT32_MIN, so
/// -127 after the clamp). The entries accept the one `got` holds there.
inline std::vector<Mistake> quantize(std::span<const float> x,
                                     std::function<float(std::size_t)> scale_of,
                                     std::span<const std::int8_t> got = {}) {
  auto quotient = [x, scale_of](std::size_t i) { return static_cast<double>(x[i] / scale_of(i)); };
  auto clamped = [got](double rounded, std::size_t i) {
    if (std::fabs(rounded) < 0x1p31 || got.empty()) return mistakes::clamped(rounded);
    return got[i] == -kQuantMax ? double{-kQuantMax} : mistakes::clamped(rounded);
  };
  // x clamped to [-127, 127] before the division: a quotient beyond 127 (scale < 1) is never
  // saturated, and its conversion to int8 keeps the low byte.
  auto clipped_first = [x, scale_of](std::size_t i) {
    const double r = std::nearbyint(
        static_cast<double>(std::clamp(x[i], -float{kQuantMax}, float{kQuantMax}) / scale_of(i)));
    return int8_answer(static_cast<std::int8_t>(static_cast<std::int32_t>(r)));
  };
  return {
      {"round(x / scale) converted to int before the clamp, which overflows beyond +-2^31",
       "a float beyond the int32 range has no int value: x86's conversion gives INT32_MIN, which "
       "the clamp then makes -127 (a huge positive value comes out -127). Clamp the float to "
       "[-127, 127] first, then convert.",
       [=](std::size_t i) {
         const double r = std::nearbyint(quotient(i));
         return std::fabs(r) < 0x1p31 ? mistakes::clamped(r) : double{-kQuantMax};
       }},
      {"x / scale rounded half away from zero (std::round)",
       "ties must go to the even neighbour (2.5 -> 2, 3.5 -> 4): use std::nearbyint (or "
       "xsimd::nearbyint), which rounds half to even in the default rounding mode.",
       [=](std::size_t i) { return clamped(std::round(quotient(i)), i); }},
      {"x / scale truncated toward zero, not rounded",
       "a conversion from float to int truncates (static_cast, xsimd::batch_cast), and adding 0.5 "
       "first rounds only the positive values: round with std::nearbyint (or "
       "xsimd::nearbyint_as_int), then convert.",
       [=](std::size_t i) { return clamped(std::trunc(quotient(i)), i); }},
      {"(int)(x / scale + 0.5): negative values rounded toward zero",
       "adding 0.5 and converting rounds only positive values: a conversion to int truncates "
       "toward zero, so -1.7 + 0.5 becomes -1, not -2. Round with std::nearbyint, then convert.",
       [=](std::size_t i) {
         return clamped(std::trunc(static_cast<double>(static_cast<float>(quotient(i)) + 0.5f)), i);
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
      {"round(x / scale) cast to int8 before the clamp: the cast wrapped around first",
       "clamping the int8 to [-127, 127] comes too late: the cast keeps the low 8 bits (200 "
       "becomes -56). Clamp the rounded value (as a float or an int32) to [-127, 127], then "
       "convert.",
       [=](std::size_t i) {
         const double r = std::nearbyint(quotient(i));
         if (!(std::fabs(r) < 0x1p31)) return 0.0;
         return mistakes::clamped(static_cast<std::int8_t>(static_cast<std::int32_t>(r)));
       }},
      {"floor(x / scale + 0.5): ties rounded up, not to the even neighbour",
       "ties must go to the even neighbour (2.5 -> 2, -2.5 -> -2, 3.5 -> 4): round with "
       "std::nearbyint (or xsimd::nearbyint), which rounds half to even in the default mode.",
       [=](std::size_t i) {
         return clamped(std::floor(static_cast<double>(static_cast<float>(quotient(i)) + 0.5f)), i);
       }},
      {"x / scale rounded down (std::floor)",
       "floor moves every value down, and each quotient is off by up to a whole step: round to "
       "the nearest, ties to even, with std::nearbyint (or xsimd::nearbyint).",
       [=](std::size_t i) { return clamped(std::floor(quotient(i)), i); }},
      {"round(x / scale) clamped to [-128, 127]",
       "the symmetric range is [-127, 127]: clamp to -127, not -128, so that q and -q are both "
       "representable.",
       [=](std::size_t i) {
         return mistakes::clamped(std::nearbyint(quotient(i)), -kQuantMax - 1);
       }},
      {"x / scale clamped to [-127.5, 127.5], then rounded: +-127.5 rounds to +-128",
       "127.5 is a tie, and ties go to the even neighbour, 128, which is not in [-127, 127]: its "
       "conversion to int8 wraps (to -128). Clamp to [-127, 127]: the rounded value, or the "
       "quotient itself (anything in [126.5, 127.5] rounds to 127 or 128, not only to 127).",
       [=](std::size_t i) {
         const double r = std::nearbyint(std::clamp(quotient(i), -127.5, 127.5));
         return int8_answer(static_cast<std::int8_t>(static_cast<std::int32_t>(r)));
       }},
      {"round(clamp(x, -127, 127) / scale): x clamped before dividing, not the quotient",
       "the range [-127, 127] is that of q = x / scale, not of x: clamp x / scale, after the "
       "division (and before converting), so that an x beyond 127 * scale saturates.",
       [=](std::size_t i) { return clipped_first(i); }},
      {"in the SIMD loop, round(clamp(x, -127, 127) / scale): x clamped before dividing "
       "(the tail is right)",
       "in your batch loop the range [-127, 127] is applied to x, not to q = x / scale: clamp "
       "x / scale, after the division (and before converting), as your tail loop does.",
       [=](std::size_t i) {
         return i < full_batches_end(x.size()) ? clipped_first(i)
                                               : mistakes::clamped(std::nearbyint(quotient(i)));
       }},
      {"x * scale, not x / scale",
       "quantization divides by the scale (the size of one step): q = round(x / scale); "
       "dequantize multiplies.",
       [=](std::size_t i) {
         return clamped(std::nearbyint(static_cast<double>(x[i] * scale_of(i))), i);
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
      {"q * scale / 127, as if the scale were max |x|",
       "the scale is already the size of one step (max |x| / 127): x = q * scale, nothing more.",
       [=](std::size_t i) { return static_cast<double>(q[i]) * scale / 127; }},
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

/// v kept in a signed integer of `bits` bits, which wraps around modulo 2^bits (two's complement):
/// what an int8, int16 or int32 accumulator holds after adding the same terms.
inline std::int64_t wrapped(std::int64_t v, int bits) {
  const std::int64_t modulus = std::int64_t{1} << bits;
  const std::int64_t r = ((v % modulus) + modulus) % modulus;
  return r >= modulus / 2 ? r - modulus : r;
}

/// The int32 output of a wrong sum: int32 arithmetic wraps as well (the uncorrected offset at
/// depth kMaxDepth passes 2^31).
inline double int32_answer(std::int64_t v) {
  return static_cast<double>(wrapped(v, 32));
}

/// Wrong integer products c (m x n) of a (m x depth) and b (n x depth). Each is computed exactly,
/// as the buggy code computes it, so that a match is bit for bit.
inline std::vector<Mistake> matmul_int8(std::span<const std::int8_t> a,
                                        std::span<const std::int8_t> b, std::size_t m,
                                        std::size_t n, std::size_t depth) {
  // sum over k in [first, last) of product(a_ik, k, j): the building block of every answer.
  auto sum = [=](std::size_t i, std::size_t j, std::size_t first, std::size_t last, auto product) {
    std::int64_t s = 0;
    for (std::size_t k = first; k < last; ++k) s += product(std::int64_t{a[i * depth + k]}, k, j);
    return s;
  };
  auto times_bt = [=](std::int64_t ak, std::size_t k, std::size_t j) {
    return ak * b[j * depth + k];
  };
  auto dot = [=](std::size_t i, std::size_t j, std::size_t first, std::size_t last) {
    return sum(i, j, first, last, times_bt);
  };
  // The sums of the rows of A and of B: what the +128 offset of vpdpbusd adds, times 128.
  std::vector<std::int64_t> row_a(m, 0), row_b(n, 0);
  for (std::size_t i = 0; i < m * depth; ++i) row_a[i / depth] += a[i];
  for (std::size_t j = 0; j < n * depth; ++j) row_b[j / depth] += b[j];
  auto off_by = [=](std::int64_t times_b, std::int64_t times_a) {
    return [=](std::size_t e) {
      const std::size_t i = e / n, j = e % n;
      return int32_answer(dot(i, j, 0, depth) + times_b * row_b[j] + times_a * row_a[i]);
    };
  };
  std::vector<Mistake> list = {
      {"(a + 128) * b without the correction: off by 128 * sum_k b[j][k]",
       "adding 128 to A makes it unsigned for vpdpbusd, and adds 128 * (the sum of row j of B) to "
       "every c[i][j]: subtract it (the handout's offset correction, from sums of B's rows).",
       off_by(128, 0)},
      {"A read as unsigned bytes: each negative a[i][k] 256 too large",
       "vpdpbusd (_mm512_dpbusd_epi32) multiplies unsigned bytes of its first operand by signed "
       "bytes of its second: add 128 to A to make it unsigned, then subtract 128 * (the sum of "
       "row j of B) (the handout's offset correction).",
       [=](std::size_t e) {
         return int32_answer(
             sum(e / n, e % n, 0, depth, [=](std::int64_t ak, std::size_t k, std::size_t j) {
               return static_cast<std::uint8_t>(ak) * std::int64_t{b[j * depth + k]};
             }));
       }},
      {"(a + 128) * b with the correction added, not subtracted: off by 256 * sum_k b[j][k]",
       "the offset adds 128 * (the sum of row j of B) to every c[i][j]: the correction takes it "
       "away again, c[i][j] = sum_k (a[i][k] + 128) * b[j][k] - 128 * sum_k b[j][k].",
       off_by(256, 0)},
      {"(a + 128) * b corrected with the sums of A's rows: off by 128 * (sum_k b[j][k] - sum_k "
       "a[i][k])",
       "the offset is added to A, so what it adds to c[i][j] is 128 times the sum of row j of B "
       "(one number per column of C): subtract that, not a sum of A's row.",
       off_by(128, -128)},
      {"B read as unsigned bytes: each negative b[j][k] 256 too large",
       "B's bytes went where vpdpbusd reads unsigned ones (the second argument of "
       "_mm512_dpbusd_epi32(acc, u8, s8)), or were loaded as uint8_t: B is the signed operand; "
       "A, offset by 128, is the unsigned one.",
       [=](std::size_t e) {
         return int32_answer(
             sum(e / n, e % n, 0, depth, [=](std::int64_t ak, std::size_t k, std::size_t j) {
               return ak * static_cast<std::uint8_t>(b[j * depth + k]);
             }));
       }},
      {"the sum accumulated in float32, in the order k = 0, 1, ...",
       "a float32 holds integers exactly only up to 2^24 = 16777216; past it each addition "
       "rounds (to a multiple of 2, 4, 8, ...): accumulate in std::int32_t, which is exact for "
       "every int8 product of this lab.",
       [=](std::size_t e) {
         const std::size_t i = e / n, j = e % n;
         float s = 0;
         for (std::size_t k = 0; k < depth; ++k)
           s += static_cast<float>(a[i * depth + k]) * static_cast<float>(b[j * depth + k]);
         return double(static_cast<std::int32_t>(s));
       }},
      {"the sum kept in int16, wrapping around past 32767",
       "127 * 127 * 3 = 48387 already overflows int16: accumulate in std::int32_t (widen the "
       "products before adding them).",
       [=](std::size_t e) {
         return static_cast<double>(wrapped(dot(e / n, e % n, 0, depth), 16));
       }},
      {"the sum kept in int8, wrapping around past 127",
       "one product alone reaches 127 * 127 = 16129: accumulate in std::int32_t (the type of C), "
       "not in the type of the inputs.",
       [=](std::size_t e) { return static_cast<double>(wrapped(dot(e / n, e % n, 0, depth), 8)); }},
      {"pairs of (a + 128) * b products saturated to int16 (vpmaddubsw), then corrected",
       "vpmaddubsw (_mm256_maddubs_epi16) adds each pair of u8 x s8 products with saturation: with "
       "A + 128 up to 255, a pair reaches 2 * 255 * 127 = 64770 and stops at 32767. Keep each "
       "pair within int16: multiply |a| (_mm256_abs_epi8) by b with a's sign (_mm256_sign_epi8), "
       "at most 2 * 127 * 127 = 32258, and no offset is needed.",
       [=](std::size_t e) {
         const std::size_t i = e / n, j = e % n;
         std::int64_t s = 0;
         for (std::size_t k = 0; k < depth; k += 2) {
           std::int64_t pair = (a[i * depth + k] + 128) * std::int64_t{b[j * depth + k]};
           if (k + 1 < depth)
             pair += (a[i * depth + k + 1] + 128) * std::int64_t{b[j * depth + k + 1]};
           s += std::clamp<std::int64_t>(pair, -32768, 32767);
         }
         return int32_answer(s - 128 * row_b[j]);
       }},
      {"A * B with B read as depth x n: c[i][j] = sum_k a[i][k] * b[k][j]",
       "here B is n x depth (row j of B is column j of the product, as a linear layer's weight): "
       "c[i][j] is the dot product of row i of A with row j of B, b[j * depth + k].",
       [=](std::size_t e) {
         return int32_answer(
             sum(e / n, e % n, 0, depth,
                 [=](std::int64_t ak, std::size_t k, std::size_t j) { return ak * b[k * n + j]; }));
       }},
      {"A read as depth x m: c[i][j] = sum_k a[k][i] * b[j][k]",
       "A is m x depth, row-major: row i of A starts at a[i * depth], and c[i][j] is the dot "
       "product of row i of A with row j of B.",
       [=](std::size_t e) {
         const std::size_t i = e / n, j = e % n;
         std::int64_t s = 0;
         for (std::size_t k = 0; k < depth; ++k) s += std::int64_t{a[k * m + i]} * b[j * depth + k];
         return int32_answer(s);
       }},
  };
  // Rows of A (or of B) stepped by another dimension's width: a[i * n + k] where a[i * depth + k]
  // is meant. Tried where every read stays inside the matrix (else what it read is unknown).
  const auto rows_apart = [&](bool of_a, std::size_t stride, const char* width) {
    const std::size_t rows = of_a ? m : n;
    if (stride == depth || rows < 2 || (rows - 1) * stride + depth > rows * depth) return;
    const std::string name = of_a ? "A" : "B", index = of_a ? "a[i * " : "b[j * ";
    list.push_back({"the rows of " + name + " read " + width + " apart (" + index + width +
                        " + k]) instead of depth apart",
                    name + " is " + (of_a ? "m" : "n") + " x depth, row-major: its row " +
                        (of_a ? "i" : "j") + " starts at " + index +
                        "depth], whatever the shape of C.",
                    [=](std::size_t e) {
                      const std::size_t i = e / n, j = e % n;
                      std::int64_t s = 0;
                      for (std::size_t k = 0; k < depth; ++k)
                        s += of_a ? std::int64_t{a[i * stride + k]} * b[j * depth + k]
                                  : std::int64_t{a[i * depth + k]} * b[j * stride + k];
                      return int32_answer(s);
                    }});
  };
  rows_apart(true, n, "n");
  rows_apart(true, m, "m");
  rows_apart(false, m, "m");
  rows_apart(false, n, "n");
  // C += the product: the sums added to what C held, the harness's poison (an element that comes
  // out equal to it reads as unwritten: NaN).
  const std::int64_t poison = workbook::Poison<std::int32_t>::value();
  list.push_back({"the sums added to what C held before the call (C += A * B^T)",
                  "matmul_int8 overwrites C: each c[i][j] is its sum alone. The tests fill C with "
                  "a marker (" +
                      std::to_string(poison) +
                      ") before the call, and your output is the sum plus that marker: start "
                      "each sum at zero and store it (c[i][j] = sum), do not add to c[i][j].",
                  [=](std::size_t e) {
                    const double answer = int32_answer(poison + dot(e / n, e % n, 0, depth));
                    return answer == static_cast<double>(poison) ? kNaN : answer;
                  }});
  if (depth > 1) {
    list.push_back({"every sum without its first product (the depth loop started at k = 1)",
                    "the loop over k must start at 0: k = 0 is the first product of each sum.",
                    [=](std::size_t e) { return int32_answer(dot(e / n, e % n, 1, depth)); }});
    list.push_back({"every sum without its last product (the depth loop stopped at depth - 1)",
                    "the loop over k runs while k < depth: k = depth - 1 is the last product of "
                    "each sum (k + 1 < depth, or k < depth - 1, leaves it out).",
                    [=](std::size_t e) { return int32_answer(dot(e / n, e % n, 0, depth - 1)); }});
  }
  // The int32 sum saturated to int8 when stored (wrapped, it is "the sum kept in int8" below).
  list.push_back({"each int32 sum stored clamped to the int8 range [-128, 127]",
                  "c is int32 because a sum of depth products of two int8 values needs up to 32 "
                  "bits: store the sum itself, with no clamp or cast to std::int8_t.",
                  [=](std::size_t e) {
                    const std::int64_t s = dot(e / n, e % n, 0, depth);
                    return static_cast<double>(std::clamp<std::int64_t>(s, -128, 127));
                  }});
  // A depth loop in blocks of w: without a remainder loop the last depth % w products are lost;
  // with one that starts at 0, the first ones are counted twice.
  std::vector<std::size_t> remainders;
  for (std::size_t w : {4, 8, 16, 32, 64}) {
    const std::size_t r = depth % w;
    if (r == 0 || std::find(remainders.begin(), remainders.end(), r) != remainders.end()) continue;
    remainders.push_back(r);
    const std::string products = std::to_string(r) + " product" + (r == 1 ? "" : "s");
    list.push_back(
        {"every sum without its last " + products + " (depth " + std::to_string(depth) + ")",
         "the depth loop handles whole blocks only, and depth is not a multiple of "
         "the block: add a scalar loop over the remaining products of each sum.",
         [=](std::size_t e) { return int32_answer(dot(e / n, e % n, 0, depth - r)); }});
    list.push_back({"every sum with its first " + products + " in place of its last " +
                        std::to_string(r) + " (depth " + std::to_string(depth) + ")",
                    "the remainder loop after the blocks starts again at k = 0: start it where "
                    "the block loop stopped, at k = depth - depth % (the block), " +
                        std::to_string(depth - r) + " here.",
                    [=](std::size_t e) {
                      return int32_answer(dot(e / n, e % n, 0, depth - r) +
                                          dot(e / n, e % n, 0, r));
                    }});
  }
  // A depth loop in blocks of w that resets the sums (or stores C) at each block: only the last
  // block's products remain.
  std::vector<std::size_t> starts;
  for (std::size_t w : {16, 32, 64, 128, 256, 512, 1024}) {
    if (depth <= w) continue;
    const std::size_t first = (depth - 1) / w * w;
    if (std::find(starts.begin(), starts.end(), first) != starts.end()) continue;
    starts.push_back(first);
    list.push_back({"every sum over its last block of the depth only (k from " +
                        std::to_string(first) + " to " + std::to_string(depth) + ")",
                    "the sums start again from zero at each block of the depth loop (the "
                    "accumulators zeroed, or C stored rather than added to, inside it): zero "
                    "them once, before the first block, and add every block's products.",
                    [=](std::size_t e) { return int32_answer(dot(e / n, e % n, first, depth)); }});
  }
  return list;
}

/// What the wrong elements of c have in common with the exact sums `want`, said as observed when no
/// mistake of the catalogue matches.
struct IntegerErrorPattern {
  std::string text;  ///< "" when there is no such pattern
  /// The pattern names a cause on its own (a width at which the sums wrapped, the +128 offset), in
  /// place of the generic diagnosis; otherwise it is an observation added to it.
  bool replaces = false;
};

/// The common factor of the differences (a width at which a sum wrapped, or the +128 offset), or
/// an error that depends on the row or the column of C only. Nothing for a constant error, which
/// the generic diagnosis names.
inline IntegerErrorPattern integer_error_pattern(std::span<const std::int32_t> c,
                                                 std::span<const std::int64_t> want, std::size_t m,
                                                 std::size_t n) {
  std::int64_t common = 0;  // gcd of the differences
  std::size_t wrong = 0;
  bool per_column = m > 1, per_row = n > 1, constant = true;
  for (std::size_t e = 0; e < m * n; ++e) {
    const std::int64_t d = c[e] - want[e];
    common = std::gcd(common, d);
    wrong += d != 0;
    constant = constant && d == static_cast<std::int64_t>(c[0]) - want[0];
    per_column = per_column && d == static_cast<std::int64_t>(c[e % n]) - want[e % n];
    per_row = per_row && d == static_cast<std::int64_t>(c[e - e % n]) - want[e - e % n];
  }
  if (common == 0 || constant) return {};
  // A common factor of one or two differences can be chance; of several, it is what the code did.
  if (wrong >= 2 && common % 65536 == 0)
    return {
        "every wrong element is off by a multiple of 65536: partial sums were kept in 16 bits "
        "somewhere (int16 wraps at 32767; 127 * 127 * 3 is already 48387). Accumulate in "
        "std::int32_t.",
        true};
  if (wrong >= 4 && common % 256 == 0)
    return {
        "every wrong element is off by a multiple of 256: partial sums were kept in 8 bits "
        "somewhere (int8 wraps at 127), or bytes were read as unsigned (-1 as 255). "
        "Accumulate in std::int32_t, and read A and B as signed bytes.",
        true};
  if (wrong >= 8 && common % 128 == 0)
    return {
        "every wrong element is off by a multiple of 128, as with the +128 offset of "
        "vpdpbusd's unsigned operand: compare your correction with the handout's (128 times "
        "the sum of row j of B, subtracted from every c[i][j]).",
        true};
  if (per_column)
    return {
        "Observed: the error depends on the column j of C only (every row of a column is off "
        "by the same amount): look at what your code computes once per column, such as the "
        "sums of B's rows of the offset correction."};
  if (per_row)
    return {
        "Observed: the error depends on the row i of C only (every column of a row is off by "
        "the same amount): look at what your code computes once per row of A."};
  return {};
}

// --- quantized_matmul ----------------------------------------------------------------------------

/// How quantized_matmul's entries made of matmul_int8's begin.
inline const std::string kScaledIntegerMistake = "the scales times ";

/// Wrong float products of quantized matrices: element e = (i, j) of a.rows x b.rows, with
/// exact(e) the exact integer sum. The scales used wrongly first, then the right scales times each
/// wrong integer product of matmul_int8's list (quantized_matmul usually calls it).
inline std::vector<Mistake> quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b,
                                             std::function<double(std::size_t)> exact) {
  const std::size_t n = b.rows;
  auto sa = [a, n](std::size_t e) { return static_cast<double>(a.scale(e / n)); };
  auto sb = [b, n](std::size_t e) { return static_cast<double>(b.scale(e % n)); };
  std::vector<Mistake> list = {
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
       [=](std::size_t e) { return exact(e) / (sa(e) * sb(e)); }},
      {"the scales applied twice: (a.scale(i) * b.scale(j))^2 times the integer sums",
       "each scale multiplies once: c[i][j] = a.scale(i) * b.scale(j) * (the int32 sum). If the "
       "operands were dequantized first, their product already holds the scales.",
       [=](std::size_t e) { return sa(e) * sb(e) * sa(e) * sb(e) * exact(e); }},
      {"the integer sums times A's scale only",
       "B's values are scaled too: c[i][j] = a.scale(i) * b.scale(j) * (the int32 sum).",
       [=](std::size_t e) { return sa(e) * exact(e); }},
      {"the integer sums times B's scale only",
       "A's values are scaled too: c[i][j] = a.scale(i) * b.scale(j) * (the int32 sum).",
       [=](std::size_t e) { return sb(e) * exact(e); }},
      {"both scales taken at row i: a.scale(i) * b.scale(i)",
       "c[i][j] comes from row i of A and row j of B: a.scale(i) * b.scale(j); B's scale is "
       "indexed by the column j of C.",
       [=](std::size_t e) {
         const std::size_t i = e / n;
         return b.scales.size() == 1 || i < b.rows
                    ? static_cast<double>(a.scale(i)) * b.scale(i) * exact(e)
                    : kNaN;
       }},
      {"the scales of the wrong rows: a.scale(j) * b.scale(i)",
       "c[i][j] comes from row i of A and row j of B: a.scale(i) * b.scale(j).",
       [=](std::size_t e) {
         const std::size_t i = e / n, j = e % n;
         const bool in_range =
             (a.scales.size() == 1 || j < a.rows) && (b.scales.size() == 1 || i < b.rows);
         return in_range ? static_cast<double>(a.scale(j)) * b.scale(i) * exact(e) : kNaN;
       }},
  };
  // A tile's epilogue that scales row i of C with a.scale(moved(i)) instead of a.scale(i) (or
  // column j with b.scale(moved(j))): `formula` names moved, `what` and `advice` say the rest.
  const auto scales_moved = [&](bool rows, std::size_t t, const std::string& formula,
                                const std::string& what, const std::string& advice,
                                std::function<std::size_t(std::size_t)> moved) {
    if (rows ? a.scales.size() <= 1 || a.rows <= t : b.scales.size() <= 1 || n <= t) return;
    list.push_back(
        {formula + (rows ? " for row i: " : " for column j: ") + what, advice, [=](std::size_t e) {
           return rows ? static_cast<double>(a.scale(moved(e / n))) * sb(e) * exact(e)
                       : sa(e) * static_cast<double>(b.scale(moved(e % n))) * exact(e);
         }});
  };
  // Each tile scaled with the scale of its first row (or column).
  for (std::size_t t = 2; t <= 16; ++t) {
    const std::string ts = std::to_string(t);
    const auto first_of_tile = [t](std::size_t i) { return i - i % t; };
    scales_moved(true, t, "a.scale(i - i % " + ts + ")",
                 "every row of a tile of " + ts +
                     " rows of A scaled with the scale of the tile's "
                     "first row",
                 "each row of C takes its own row's scale, a.scale(i), inside a tile too: the "
                 "epilogue of a tile of rows scales row by row.",
                 first_of_tile);
    scales_moved(false, t, "b.scale(j - j % " + ts + ")",
                 "every column of a tile of " + ts +
                     " columns scaled with the scale of the "
                     "tile's first column",
                 "each column of C takes its own row of B's scale, b.scale(j), inside a tile too: "
                 "the epilogue of a tile of columns scales column by column.",
                 first_of_tile);
  }
  // The scales indexed from 0 in every tile: the pointer to them not offset by the tile's first
  // row (or column), so row i takes the scale of row i % t.
  for (std::size_t t : {2, 3, 4, 5, 6, 7, 8, 12, 16, 32, 48, 64, 96, 128, 256}) {
    const std::string ts = std::to_string(t);
    const auto from_zero = [t](std::size_t i) { return i % t; };
    scales_moved(true, t, "a.scale(i % " + ts + ")",
                 "in every tile of " + ts + " rows, the scales of the first tile's rows",
                 "row i of C takes a.scale(i): in a tile that starts at row i0, index the scales "
                 "from i0 (the pointer to them offset by the tile's first row too, as the pointer "
                 "to A's values is).",
                 from_zero);
    scales_moved(false, t, "b.scale(j % " + ts + ")",
                 "in every tile of " + ts + " columns, the scales of the first tile's columns",
                 "column j of C takes b.scale(j): in a tile that starts at column j0, index the "
                 "scales from j0 (the pointer to them offset by the tile's first column too, as "
                 "the pointer to B's values is).",
                 from_zero);
  }
  // The +128 offset's two large terms, sum (a + 128) * b and its correction 128 * sum b, each
  // converted to float32 before they are subtracted: past 2^24 each rounds by units.
  {
    auto corrections = std::make_shared<std::vector<double>>(n, 0.0);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t k = 0; k < a.cols; ++k)
        (*corrections)[j] += 128.0 * static_cast<double>(b.values[j * a.cols + k]);
    list.push_back(
        {"the scales times float(sum (a + 128) * b) - float(128 * sum b): the offset's biased sum "
         "and its correction each rounded to float32 before they cancel",
         "past 2^24 a float32 holds an integer only to within a few units, and the biased sum and "
         "the correction are both that large: subtract them in int32 first, then convert the exact "
         "difference once and scale it.",
         [=](std::size_t e) {
           const double correction = (*corrections)[e % n];
           const double biased = exact(e) + correction;
           return sa(e) * sb(e) *
                  (static_cast<double>(static_cast<float>(biased)) -
                   static_cast<double>(static_cast<float>(correction)));
         }});
  }
  for (Mistake& wrong : matmul_int8(a.values, b.values, a.rows, n, a.cols))
    list.push_back(
        {kScaledIntegerMistake + wrong.what,
         "the scales are right, the integer sums are not (matmul_int8's tests name "
         "the same mistake): " +
             wrong.advice,
         [=, answer = wrong.answer](std::size_t e) { return sa(e) * sb(e) * answer(e); }});
  return list;
}

}  // namespace lab04::mistakes
