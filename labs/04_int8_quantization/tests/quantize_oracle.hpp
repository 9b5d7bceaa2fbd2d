#pragma once
// The answers lab 04's kernels are checked against, the tolerances (each derived below), and the
// catalogue of mistakes each check names (quantize_mistakes.hpp). Shared by the correctness tests
// and the perf cases.
#include "quantize.hpp"
#include "quantize_mistakes.hpp"

#include <workbook/buffer.hpp>
#include <workbook/check.hpp>
#include <workbook/seed.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace lab04::oracle {

/// Outputs of at most this many elements have their catalogue's look-alike entries merged (see
/// mistakes::merge_alike): coincidences need few elements, and each comparison costs a pass (for a
/// product, a product).
inline constexpr std::size_t kMergeUpTo = 4096;

inline workbook::Where where(const char* function) {
  return {function, "labs/04_int8_quantization/quantize.cpp", workbook::Model::simd};
}

inline std::string show(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

// --- Inputs ----------------------------------------------------------------------------------

/// Fills q with values in [-127, 127], eight from each 64 random bits: the perf inputs are a
/// quarter of a gigabyte, too many for one generator call each. (The slight bias of `% 255` does
/// not matter for timing; the correctness tests draw with workbook::int8_uniform.)
inline void fill_int8(std::span<std::int8_t> q, workbook::Rng& rng) {
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < q.size(); ++i, bits >>= 8) {
    if (i % 8 == 0) bits = rng.next();
    q[i] = static_cast<std::int8_t>(static_cast<int>(bits & 0xFF) % 255 - 127);
  }
}

// --- Quantization ----------------------------------------------------------------------------

/// The specification itself: round the float32 quotient to the nearest integer, ties to even
/// (std::nearbyint in the default rounding mode), then clamp to [-127, 127].
inline int quantized(float x, float scale) {
  if (std::isnan(x)) return 0;  // quantize rejects NaN: there is no answer to compare with
  const float quotient = x / scale;
  const double rounded = std::nearbyint(static_cast<double>(quotient));
  return static_cast<int>(std::clamp(rounded, double{-kQuantMax}, double{kQuantMax}));
}

/// Is x / scale within two float32 roundings of a tie (k + 1/2) without being one? There, computing
/// x * (1 / scale), which rounds twice, may land on the other side of the tie: either neighbour is
/// accepted. A quotient that is exactly a tie is never ambiguous (it must go to the even
/// neighbour).
inline bool near_tie(float x, float scale) {
  const double exact = static_cast<double>(x) / static_cast<double>(scale);
  if (!(std::fabs(exact) < kQuantMax + 1)) return false;  // saturated either way
  const double tie = std::floor(exact) + 0.5;
  // x == tie * scale exactly: the product is exact in double.
  const bool is_tie = static_cast<double>(x) == tie * static_cast<double>(scale);
  return !is_tie && std::fabs(exact - tie) <= 3 * workbook::kFloatUnitRoundoff * std::fabs(exact);
}

/// Exact except next to a tie: |got - want| <= 1 * scale(i) with scale(i) 1 there and 0 elsewhere.
inline workbook::Tolerance quantize_tolerance() {
  return {
      1, 0,
      "exact: q = clamp(round_half_to_even(x / scale), -127, 127), with x / scale in float32; "
      "where the quotient lies within two roundings of a tie but is not one, either neighbour is "
      "accepted (x * (1 / scale) rounds twice)"};
}

/// Every wrong element is one whose answer saturates (|x / scale| beyond 127.5): the clamp to
/// [-127, 127] is missing or wrong, whatever the conversion did with the value instead.
inline bool only_saturated_wrong(std::span<const float> x,
                                 const std::function<float(std::size_t)>& scale_of,
                                 const workbook::GuardedBuffer<std::int8_t>& q) {
  bool any = false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float s = scale_of(i);
    const int want = quantized(x[i], s);
    if (q[i] == want || (near_tie(x[i], s) && std::abs(q[i] - want) <= 1) || std::isnan(x[i]))
      continue;
    if (!(std::fabs(static_cast<double>(x[i] / s)) > kQuantMax + 0.5)) return false;
    any = true;
  }
  return any;
}

/// Checks q = quantize(x, scale) (one scale), or a per-row quantization (scales[i / cols]).
inline workbook::CheckResult check_quantize(std::span<const float> x, std::span<const float> scales,
                                            std::size_t cols,
                                            const workbook::GuardedBuffer<std::int8_t>& q,
                                            const char* function = "quantize") {
  const std::function<float(std::size_t)> scale_of = [=](std::size_t i) {
    return scales[cols == 0 ? 0 : i / cols];
  };
  workbook::CheckResult r = workbook::check_elementwise(
      q, [=](std::size_t i) { return static_cast<double>(quantized(x[i], scale_of(i))); },
      {.where = where(function),
       .tolerance = quantize_tolerance(),
       .inputs = {workbook::column("x", x),
                  {"x / scale",
                   [=](std::size_t i) { return static_cast<double>(x[i] / scale_of(i)); }}},
       .scale = [=](std::size_t i) { return near_tie(x[i], scale_of(i)) ? 1.0 : 0.0; },
       .mistakes =
           [=, &q] {
             std::vector<workbook::Mistake> list = mistakes::quantize(x, scale_of, q.span());
             // Per row: the scales returned right, the values quantized with another row's.
             if (cols != 0 && scales.size() > 1)
               list.push_back(
                   {"every row quantized with row 0's scale (scales[0]), though the scales "
                    "returned are each row's own",
                    "row r must be quantized with its own scale, scales[r], the one returned for "
                    "it: dequantizing multiplies row r by scales[r].",
                    [=](std::size_t i) {
                      return static_cast<double>(quantized(x[i], scales[0]));
                    }});
             return x.size() <= kMergeUpTo ? mistakes::merge_alike(std::move(list), x.size())
                                           : list;
           },
       .lanes = workbook::simd_lanes<float>()});  // the loop runs over batches of floats
  // No entry matched, yet only saturating elements are wrong: a clamp missing, with a conversion
  // other than the one the catalogue assumes (x86's: the low byte of the int32).
  if (!r.ok && r.mistake.empty() && r.diagnosis.find("outside the output") == std::string::npos &&
      r.diagnosis.find("never written") == std::string::npos &&
      only_saturated_wrong(x, scale_of, q))
    r.diagnosis =
        "only elements beyond +-127.5 * scale are wrong: they must saturate to +-127. A cast to "
        "int8 wraps around (it keeps the low 8 bits: 200 becomes -56): clamp the rounded value to "
        "[-127, 127] before converting.";
  return r;
}
inline workbook::CheckResult check_quantize(std::span<const float> x, float scale,
                                            const workbook::GuardedBuffer<std::int8_t>& q) {
  return check_quantize(x, std::span<const float>(&scale, 1), 0, q);
}

/// max |x_i| / 127 in float32 (the maximum is exact, the division rounds once), or 1 when that is
/// 0.
inline float symmetric_scale(std::span<const float> x) {
  float largest = 0;
  for (const float v : x) largest = std::max(largest, std::fabs(v));
  const float scale = largest / static_cast<float>(kQuantMax);
  return scale > 0 ? scale : 1.0f;
}

/// The scale must be exactly the float32 quotient: one division, nothing to tolerate. `more` are
/// mistakes tried before the catalogue's (quantize_rows: the whole matrix's scale).
inline workbook::CheckResult check_symmetric_scale(std::span<const float> x, float got,
                                                   const char* function = "symmetric_scale",
                                                   std::vector<workbook::Mistake> more = {}) {
  workbook::CheckResult r;
  r.checked = 1;
  r.edit = "edit " + where(function).file + ": " + function;
  const float want = symmetric_scale(x);
  if (got == want) return r;
  const float largest = mistakes::largest_magnitude(x, 0, x.size());
  r.ok = false;
  r.wrong = 1;
  r.summary = std::string(function) + ": returned " + show(got) + ", expected " + show(want) +
              " = max|x| / 127 = " + show(largest) + " / 127 (n = " + std::to_string(x.size()) +
              ")";
  r.tolerance =
      "exact: max |x_i| is one of the inputs, and one float32 division by 127 rounds once";
  for (const std::vector<workbook::Mistake>& list : {more, mistakes::symmetric_scale(x)})
    for (const workbook::Mistake& m : list) {
      // One number may fit several: the test's other sizes tell which (testing::Cases).
      if (m.answer(0) == static_cast<double>(got))
        r.add_match(m, "your result matches " + m.what + ": " + m.advice);
    }
  if (!r.diagnosis.empty()) return r;
  if (largest == 0)
    r.diagnosis =
        "the tensor is all zeros (or empty): its scale is defined as 1, so that quantize never "
        "divides by zero.";
  else if (got == 1.0f && want != 1.0f)
    r.diagnosis =
        "your scale is 1, the value defined for an all-zero tensor, but max|x| = " + show(largest) +
        " is not 0: your max|x| / 127 came out 0 before that special case. Look for a division "
        "in integers: 1 / 127 is 0 in int (also as the initialiser of a float constant), and so "
        "is max / 127 where max was stored in an int.";
  else if (std::isinf(got) && std::isfinite(largest))
    // Every input is finite and so is the answer: something computed on the way overflowed.
    r.diagnosis = "returned " + show(got) + ", though every input is finite (the largest |x| is " +
                  show(largest) +
                  "): a value computed on the way passed float's largest, 3.4e38. A square "
                  "does once |x| passes 1.8e19, as does a product or a sum of large values: "
                  "compare the magnitudes themselves (std::fabs, xsimd::abs), not their squares.";
  else
    r.diagnosis = "not max|x| / 127: check the reduction over every element (tail included).";
  return r;
}

/// The scales of quantize_rows (rows x cols): the first wrong row's result, named by a mistake of
/// the whole matrix's scales when one gives every row's (mistakes::row_scales), else by the
/// catalogue of symmetric_scale on that row.
inline workbook::CheckResult check_row_scales(std::span<const float> x, std::size_t cols,
                                              std::span<const float> scales) {
  for (std::size_t row = 0; row < scales.size(); ++row) {
    const auto values = x.subspan(row * cols, cols);
    if (check_symmetric_scale(values, scales[row], "quantize_rows")) continue;
    workbook::CheckResult r = check_symmetric_scale(values, scales[row], "quantize_rows");
    r.summary = "the scale of row " + std::to_string(row) + ": " + r.summary;
    const std::size_t rows = scales.size();
    for (const workbook::Mistake& m :
         mistakes::merge_alike(mistakes::row_scales(x, cols), rows <= kMergeUpTo ? rows : 0)) {
      bool all = true;
      for (std::size_t k = 0; k < rows && all; ++k)
        all = m.answer(k) == static_cast<double>(scales[k]);
      if (!all) continue;
      r.mistake = m.what;
      r.diagnosis = "your result matches " + m.what + ": " + m.advice;
      break;
    }
    // No pattern over every row: is this row's scale that of another row?
    for (std::size_t other = 0; other < rows && r.mistake.empty(); ++other)
      if (other != row && scales[row] == symmetric_scale(x.subspan(other * cols, cols)))
        r.diagnosis = "the scale of row " + std::to_string(row) + " is exactly that of row " +
                      std::to_string(other) + " (max|x| / 127 over row " + std::to_string(other) +
                      "): the scan that finds a row's largest |x| ran over another row than the "
                      "one quantized with it. Check the row index of the scan, x[r * cols, "
                      "(r + 1) * cols), against the row index of the store.";
    return r;
  }
  return {};
}

/// x = q * scale rounds once to float32.
inline workbook::CheckResult check_dequantize(std::span<const std::int8_t> q, float scale,
                                              const workbook::GuardedBuffer<float>& x) {
  return workbook::check_elementwise(
      x, [=](std::size_t i) { return static_cast<double>(q[i]) * static_cast<double>(scale); },
      {.where = where("dequantize"),
       .tolerance = workbook::Tolerance::roundings(1),
       .inputs = {workbook::column("q", q)},
       .mistakes = [=] { return mistakes::dequantize(q, scale); }});
}

/// ReLU selects q or 0: exact.
inline workbook::CheckResult check_quantized_relu(std::span<const std::int8_t> q,
                                                  const workbook::GuardedBuffer<std::int8_t>& out) {
  return workbook::check_elementwise(
      out, [=](std::size_t i) { return static_cast<double>(std::max<int>(q[i], 0)); },
      {.where = where("quantized_relu"),
       .tolerance = workbook::Tolerance::exact(),
       .inputs = {workbook::column("q", q)},
       .mistakes = [=] { return mistakes::quantized_relu(q); }});
}

// --- The integer product ----------------------------------------------------------------------

/// C = A * B^T exactly, in int64 (no bound needed), one contiguous dot product per element.
inline std::vector<std::int64_t> product(std::span<const std::int8_t> a,
                                         std::span<const std::int8_t> b, std::size_t m,
                                         std::size_t n, std::size_t depth) {
  std::vector<std::int64_t> c(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::int8_t* row = a.data() + i * depth;
      const std::int8_t* col = b.data() + j * depth;
      std::int64_t sum = 0;
      for (std::size_t k = 0; k < depth; ++k) sum += row[k] * col[k];
      c[i * n + j] = sum;
    }
  return c;
}

/// Integer arithmetic is exact: the int32 product must equal the int64 oracle.
inline workbook::CheckResult check_matmul_int8(std::span<const std::int8_t> a,
                                               std::span<const std::int8_t> b,
                                               std::span<const std::int64_t> want,
                                               const workbook::GuardedBuffer<std::int32_t>& c,
                                               std::size_t m, std::size_t n, std::size_t depth) {
  workbook::CheckResult r = workbook::check_elementwise(
      c, [=](std::size_t i) { return static_cast<double>(want[i]); },
      {.where = where("matmul_int8"),
       .tolerance = workbook::Tolerance::exact(),
       .shape = {m, n},
       .mistakes = [=] {
         // Tiny products can make two mistakes give the same sums: then both are named.
         std::vector<workbook::Mistake> list = mistakes::matmul_int8(a, b, m, n, depth);
         return m * n <= kMergeUpTo ? mistakes::merge_alike(std::move(list), m * n) : list;
       }});
  if (!r.ok && depth == 0 && std::all_of(c.data(), c.data() + m * n, [](std::int32_t v) {
        return workbook::Poison<std::int32_t>::is_value(v);
      }))
    r.diagnosis =
        "C was left as it was: with depth 0 every sum is empty, so every c[i][j] is 0, and C must "
        "still be written. Store each sum after the loop over k (which runs 0 times here), not "
        "inside it, and store it rather than add it to c[i][j].";
  if (r.ok || !r.mistake.empty() || r.diagnosis.find("never written") != std::string::npos ||
      r.diagnosis.find("outside the output") != std::string::npos || depth == 0)
    return r;
  // No entry matched: what the wrong elements have in common, as observed (a width at which the
  // sums wrapped, an error per column of C, ...). Poison (unwritten elements) would hide it.
  for (std::size_t i = 0; i < m * n; ++i)
    if (c.is_poison(i)) return r;
  const mistakes::IntegerErrorPattern seen = mistakes::integer_error_pattern(c.span(), want, m, n);
  if (seen.replaces)
    r.diagnosis = seen.text;
  else if (!seen.text.empty())
    r.diagnosis += " " + seen.text;
  return r;
}

// --- The float product of quantized matrices --------------------------------------------------

/// c = sa_i * sb_j * exact_ij in float32: the int32 sum converts to float (one rounding once it
/// exceeds 2^24), the two scales multiply (one), and the product (one): three roundings, so
/// |error| <= gamma_3 |exact| (Tolerance::roundings(3)), whatever the order of the products.
inline workbook::CheckResult check_quantized_matmul(const QuantizedMatrix& a,
                                                    const QuantizedMatrix& b,
                                                    std::span<const std::int64_t> exact,
                                                    const workbook::GuardedBuffer<float>& c) {
  const std::size_t n = b.rows;
  const std::function<double(std::size_t)> sum = [=](std::size_t i) {
    return static_cast<double>(exact[i]);
  };
  workbook::CheckResult r = workbook::check_elementwise(
      c,
      [=](std::size_t i) {
        return static_cast<double>(a.scale(i / n)) * static_cast<double>(b.scale(i % n)) * sum(i);
      },
      {.where = where("quantized_matmul"),
       .tolerance = workbook::Tolerance::roundings(3),
       .shape = {a.rows, n},
       .mistakes = [=] {
         std::vector<workbook::Mistake> list = mistakes::quantized_matmul(a, b, sum);
         return a.rows * n <= kMergeUpTo ? mistakes::merge_alike(std::move(list), a.rows * n)
                                         : list;
       }});
  // The scales are right and the integer sums wrong: the fix is where the sums are computed.
  if (r.mistake.starts_with(mistakes::kScaledIntegerMistake))
    r.edit = "edit " + where("matmul_int8").file +
             ": the integer sums of quantized_matmul (matmul_int8, when it calls it)";
  return r;
}

/// How far quantized_matmul may be from the float product of the original (unquantized) rows x_a
/// and x_b, derived in the handout (section "The error model"): with h = 1/2 + 128 u,
///   |a_ik - sa_i qa_ik| <= h sa_i   (rounding to the nearest step, plus the quotient's rounding)
///   C - C^ = sum_k a_ik (b_jk - b^_jk) + (a_ik - a^_ik) b^_jk, so
///   |C_ij - C^_ij| <= h (sb_j ||a_i||_1 + sa_i sb_j ||qb_j||_1),
/// plus the float32 roundings of C^ (gamma_3 |C^_ij|) and the float64 oracle's own (K 2^-53
/// sum|ab|).
struct AccuracyBound {
  std::vector<double> exact;  ///< the float64 product of the unquantized inputs
  std::vector<double> bound;  ///< the bound on |quantized_matmul - exact|, per element
  double predicted_rms = 0;   ///< the typical error if rounding errors are uniform in +-scale / 2
  /// The operands, unquantized and quantized (views: they must outlive the bound), so that a result
  /// outside it can be traced to the step that is wrong (check_steps).
  std::span<const float> xa, xb;
  QuantizedMatrix a, b;
};

inline AccuracyBound accuracy_bound(std::span<const float> xa, std::span<const float> xb,
                                    const QuantizedMatrix& a, const QuantizedMatrix& b) {
  const std::size_t m = a.rows, n = b.rows, depth = a.cols;
  const double h = 0.5 + 128 * workbook::kFloatUnitRoundoff;
  AccuracyBound r{.xa = xa, .xb = xb, .a = a, .b = b};
  r.exact.resize(m * n);
  r.bound.resize(m * n);
  std::vector<double> l1_a(m, 0), l2_a(m, 0), l1_qb(n, 0), l2_b(n, 0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t k = 0; k < depth; ++k) {
      l1_a[i] += std::fabs(xa[i * depth + k]);
      l2_a[i] += static_cast<double>(xa[i * depth + k]) * xa[i * depth + k];
    }
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t k = 0; k < depth; ++k) {
      l1_qb[j] += std::abs(b.values[j * depth + k]);
      l2_b[j] += static_cast<double>(xb[j * depth + k]) * xb[j * depth + k];
    }
  double variance = 0;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0, quantized_sum = 0;
      for (std::size_t k = 0; k < depth; ++k) {
        const double p = static_cast<double>(xa[i * depth + k]) * xb[j * depth + k];
        sum += p;
        magnitude += std::fabs(p);
        quantized_sum += a.values[i * depth + k] * b.values[j * depth + k];
      }
      const double sa = a.scale(i), sb = b.scale(j);
      r.exact[i * n + j] = sum;
      r.bound[i * n + j] = h * (sb * l1_a[i] + sa * sb * l1_qb[j]) +
                           workbook::gamma_float(3) * std::fabs(sa * sb * quantized_sum) +
                           static_cast<double>(depth + 1) * 0x1p-53 * magnitude;
      variance += (sb * sb * l2_a[i] + sa * sa * l2_b[j]) / 12;
    }
  r.predicted_rms = m * n > 0 ? std::sqrt(variance / static_cast<double>(m * n)) : 0;
  return r;
}

/// One operand of quantized_matmul as the tests quantize it: per row (quantize_rows) when it has a
/// scale per row, else per tensor (symmetric_scale, then quantize). The scales first, then the
/// values, each against the oracle and its catalogue.
inline workbook::CheckResult check_quantized_operand(std::span<const float> x,
                                                     const QuantizedMatrix& q) {
  workbook::GuardedBuffer<std::int8_t> values(q.values.size());
  std::copy(q.values.begin(), q.values.end(), values.data());
  if (q.scales.size() > 1) {
    if (workbook::CheckResult r = check_row_scales(x, q.cols, q.scales); !r) return r;
    return check_quantize(x, q.scales, q.cols, values, "quantize_rows");
  }
  if (workbook::CheckResult r = check_symmetric_scale(x, q.scales[0]); !r) return r;
  return check_quantize(x, q.scales[0], values);
}

/// The steps between the floats of `p` and quantized_matmul's c, each against the oracle: the
/// quantization of A, of B, then the product of the quantized values. The first step that is wrong
/// (named from its catalogue, as its own tests name it), or ok when every step is right.
inline workbook::CheckResult check_steps(const AccuracyBound& p, std::span<const float> c) {
  for (auto [x, q, name] : {std::tuple{p.xa, p.a, "A"}, std::tuple{p.xb, p.b, "B"}}) {
    workbook::CheckResult r = check_quantized_operand(x, q);
    if (r) continue;
    r.summary = "the quantization of " + std::string(name) + " is wrong: " + r.summary;
    return r;
  }
  workbook::GuardedBuffer<float> got(c.size());
  std::copy(c.begin(), c.end(), got.data());
  const std::vector<std::int64_t> exact =
      product(p.a.values, p.b.values, p.a.rows, p.b.rows, p.a.cols);
  return check_quantized_matmul(p.a, p.b, exact, got);
}

/// A result outside the accuracy bound, explained by the step that is wrong (when one is).
inline workbook::CheckResult with_cause(workbook::CheckResult outside,
                                        const workbook::CheckResult& step) {
  if (step) return outside;
  workbook::CheckResult r = step;
  r.summary =
      outside.summary + ". Checked step by step against the oracle, the cause is: " + step.summary;
  return r;
}

inline workbook::CheckResult check_accuracy(const AccuracyBound& bound, std::size_t m,
                                            std::size_t n,
                                            const workbook::GuardedBuffer<float>& c) {
  workbook::CheckResult r = workbook::check_elementwise(
      c, [&](std::size_t i) { return bound.exact[i]; },
      {.where = where("quantized_matmul"),
       .tolerance =
           {1, 0,
            "the quantization error bound of the handout: |c_ij - (x_a x_b^T)_ij| <= "
            "h (sb_j ||a_i||_1 + sa_i sb_j ||qb_j||_1) + gamma_3 |c^_ij|, h = 1/2 + 128 u"},
       .shape = {m, n},
       .scale = [&](std::size_t i) { return bound.bound[i]; }});
  if (r || bound.xa.empty()) return r;
  return with_cause(r, check_steps(bound, c.span()));
}

/// Why the typical error of quantized_matmul (c) is far from the model's: the step that is wrong,
/// named as its own tests name it; or, when every step is right, what was measured.
inline std::string explain_typical_error(const AccuracyBound& bound, std::span<const float> c,
                                         double rms) {
  const workbook::CheckResult step = check_steps(bound, c);
  const std::string measured = "RMS error " + show(rms) + ", " + show(rms / bound.predicted_rms) +
                               " times the model's " + show(bound.predicted_rms);
  if (!step)
    return measured + ". Checked step by step against the oracle, the cause is: " + step.report();
  return measured +
         ", although the scales, the quantized values and the scaled integer product "
         "all match the oracle.";
}

/// Why x came back from quantize and dequantize (q, back) more than half a step away: the step
/// that is wrong, named from its catalogue; "" when both match the oracle.
inline std::string explain_round_trip(std::span<const float> x, float scale,
                                      std::span<const std::int8_t> q, std::span<const float> back) {
  workbook::GuardedBuffer<std::int8_t> quantized(q.size());
  std::copy(q.begin(), q.end(), quantized.data());
  if (workbook::CheckResult r = check_quantize(x, scale, quantized); !r) return r.report();
  workbook::GuardedBuffer<float> dequantized(back.size());
  std::copy(back.begin(), back.end(), dequantized.data());
  if (workbook::CheckResult r = check_dequantize(q, scale, dequantized); !r) return r.report();
  return "";
}

}  // namespace lab04::oracle
