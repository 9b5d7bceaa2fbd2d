#pragma once
// The mistakes students of lab 01 make, each with the wrong answer it gives, computed in float64
// like the oracle (vector_ops_oracle.hpp). When a check fails, the output is compared with every
// entry of the kernel's list, in order, before any generic pattern; the first that matches is
// named: "your output matches <what>: <advice>". Specific entries come before general ones.
//
// A missing tail loop, or elements left out of a sum, are not listed: the harness recognises them
// in any kernel. The entries are what else goes wrong in these kernels, in this build's width.
#include <workbook/check.hpp>

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace lab01::mistakes {

using workbook::Mistake;

/// Batch::size in this build: a mistake in the scalar tail touches the last n % kLanes elements.
inline constexpr std::size_t kLanes = xsimd::batch<float>::size;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// --- relu ----------------------------------------------------------------------------------------

inline std::vector<Mistake> relu(std::span<const float> x) {
  return {
      {"a ReLU that turns NaN into 0",
       "NaN must stay NaN, as in PyTorch. A comparison with NaN is false, so `x > 0 ? x : 0`, a "
       "mask of x > 0 and xsimd::max(x, zero) all give 0 for it. Zero the elements where x <= 0 "
       "instead: xsimd::select(x <= zero, zero, x) keeps NaN.",
       [x](std::size_t i) {
         const double v = x[i];
         return std::isnan(v) ? 0.0 : std::max(v, 0.0);
       }},
      {"min(x, 0): the negative values kept and the positive ones zeroed",
       "xsimd::select(mask, a, b) takes a where the mask is true and b elsewhere: with the mask "
       "x <= 0, a is zero and b is x. Swap the two branches (or flip the comparison).",
       [x](std::size_t i) {
         const double v = x[i];
         return v > 0 ? 0.0 : v;  // select(x > 0, zero, x): NaN is not > 0, so it stays NaN
       }},
      {"x * (x > 0), which makes -inf into NaN",
       "multiplying by a 0/1 mask is not a selection: -inf * 0 is NaN, and relu(-inf) is 0. Select "
       "instead: xsimd::select(x <= zero, zero, x).",
       [x](std::size_t i) {
         const double v = x[i];
         return std::isinf(v) && v < 0 ? kNaN : (std::isnan(v) ? v : std::max(v, 0.0));
       }},
      {"(x + |x|) / 2 in float, which overflows to inf for |x| > FLT_MAX / 2 and makes -inf "
       "into NaN",
       "the formula is right on paper, but x + |x| overflows for huge x, and -inf + inf is NaN. "
       "Select instead: xsimd::select(x <= zero, zero, x) is exact for every input.",
       [x](std::size_t i) {
         const float v = x[i];
         return static_cast<double>((v + std::fabs(v)) * 0.5f);  // in float, as the kernel
       }},
  };
}

// --- the loop of any elementwise kernel ----------------------------------------------------------

/// The mistakes of the loop itself, in any elementwise kernel: where the scalar tail reads or
/// writes, and a step that is not the batch's width. `right(i)` is element i of the right output.
inline std::vector<Mistake> elementwise_loop(std::size_t n,
                                             std::function<double(std::size_t)> right) {
  const std::size_t tail = n % kLanes, full = n - tail;
  std::vector<Mistake> list;
  if (tail > 0 && full > 0) {
    list.push_back(
        {"the tail computed from the first " + std::to_string(tail) + " inputs: out[" +
             std::to_string(full) + " + j] from element j",
         "the scalar tail restarts its input index at 0: it must go on where the SIMD loop "
         "stopped. Keep one index i for both loops (declared before the SIMD loop), so that the "
         "tail runs for (; i < n; ++i) out[i] = f(in[i]).",
         [=](std::size_t i) { return right(i < full ? i : i - full); }});
    // Told apart from a tail never written only where an element of the tail's result differs
    // from the first elements' (ReLU gives 0 for both when both inputs are negative).
    bool distinct = false;
    for (std::size_t j = 0; j < tail && full >= tail; ++j) {
      const double moved = right(full + j), kept = right(j);
      distinct = distinct || (moved != kept && !(std::isnan(moved) && std::isnan(kept)));
    }
    if (distinct)
      list.push_back(
          {"the tail's results stored at the start of the output, out[j] for element " +
               std::to_string(full) + " + j",
           "the scalar tail restarts its output index at 0: the last " + std::to_string(tail) +
               " element(s) are never written and the first ones are overwritten. Keep one index i "
               "for both loops, so that the tail runs for (; i < n; ++i) out[i] = f(in[i]).",
           [=](std::size_t i) {
             return i < tail ? right(full + i) : (i < full ? right(i) : kNaN);
           }});
  }
  // A batch made from one float (Batch v = a[i]; xsimd's constructor from a scalar broadcasts it)
  // where a load is meant: every lane of a whole batch holds the result of the batch's first
  // element; the tail, a float at a time, is right.
  if (full > 0)
    list.push_back(
        {"every lane of each batch holding the result of its first element: out[i] "
         "from element i - i % " +
             std::to_string(kLanes) + " in the whole batches",
         "a batch made from one float (Batch v = a[i], or xsimd::broadcast(a[i])) "
         "copies that float into all " +
             std::to_string(kLanes) +
             " lanes; to take the batch's elements from memory, load them: "
             "Batch::load_unaligned(&a[i]).",
         [=](std::size_t i) { return right(i < full ? i - i % kLanes : i); }});
  // A step larger than the batch (a lane count hard-coded for wider registers, or a loop unrolled
  // by two that stores one batch): each step leaves elements unwritten.
  for (std::size_t step : {2 * kLanes, 4 * kLanes}) {
    const std::size_t stepped = n / step * step;
    if (stepped == 0) continue;
    list.push_back(
        {"one batch stored for every " + std::to_string(step) + " elements: the loop steps by " +
             std::to_string(step) + ", a batch holds " + std::to_string(kLanes),
         "elements " + std::to_string(kLanes) + " to " + std::to_string(step - 1) +
             " of each step are never written. Step by Batch::size (" + std::to_string(kLanes) +
             " in this build), not by a number written in the code, or store one batch for each " +
             std::to_string(kLanes) + " elements of the step.",
         [=](std::size_t i) { return i < stepped && i % step >= kLanes ? kNaN : right(i); }});
  }
  return list;
}

/// What an output written past its end says about the SIMD loop, when the overrun is the one a
/// loop of whole batches leaves: "" when it is not. `after` elements past the end were written,
/// contiguously from the first.
inline std::string past_the_end(std::size_t n, std::size_t after) {
  // Whole batches while i < n, no tail: the last batch starts below n and ends past it.
  const bool whole_batches = n % kLanes != 0 && after == kLanes - n % kLanes;
  // A loop that steps by `step` < kLanes (a lane count hard-coded for narrower registers) while
  // each batch stores kLanes: its last batch starts at the last multiple of step with
  // i + step <= n.
  std::size_t step = 0;
  for (std::size_t s : {std::size_t{4}, std::size_t{8}}) {
    if (s >= kLanes || n < s) continue;
    const std::size_t last = (n - s) / s * s;
    if (step == 0 && last + kLanes > n && after == last + kLanes - n) step = s;
  }
  const std::string lanes = std::to_string(kLanes);
  const std::string fix =
      " Step by Batch::size, run the SIMD loop while i + Batch::size <= n, and finish the rest "
      "one by one.";
  if (whole_batches && step > 0)
    return " The overrun is what a batch of " + lanes + " stored where only " +
           std::to_string(n % kLanes) + " elements were left writes: a SIMD loop that runs while " +
           "i < n, or one that steps by a lane count of " + std::to_string(step) +
           " written in the code (this build's Batch::size is " + lanes + ")." + fix;
  if (whole_batches)
    return " The overrun is the rest of the last batch (" + std::to_string(n - n % kLanes) + " + " +
           lanes + " > n = " + std::to_string(n) + "): the SIMD loop runs while i < n." + fix;
  if (step > 0)
    return " The overrun is what a loop that steps by a lane count of " + std::to_string(step) +
           " written in the code leaves when each batch stores " + lanes +
           " (this build's Batch::size)." + fix;
  return "";
}

// --- add, multiply, squared_difference
// -------------------------------------------------------------

inline std::vector<Mistake> add(std::span<const float> a, std::span<const float>) {
  return {{"a + a: b is never read",
           "the second operand is loaded from a again (a copy-paste slip): load it from b.",
           [a](std::size_t i) { return 2.0 * a[i]; }}};
}

inline std::vector<Mistake> multiply(std::span<const float> a, std::span<const float> b) {
  return {{"a * a: b is never read",
           "the second operand is loaded from a again (a copy-paste slip): load it from b.",
           [a](std::size_t i) { return double(a[i]) * double(a[i]); }},
          {"a + b in multiply",
           "the loop was copied from add and still adds: multiply the two batches (and the two "
           "floats of the tail).",
           [a, b](std::size_t i) { return double(a[i]) + double(b[i]); }}};
}

inline std::vector<Mistake> squared_difference(std::span<const float> a, std::span<const float> b) {
  return {{"a - b, not squared",
           "the difference d = a - b is stored as it is: store d * d (in the SIMD loop and in the "
           "tail).",
           [a, b](std::size_t i) { return double(a[i]) - double(b[i]); }}};
}

/// In place (out is a), a last whole batch at n - Batch::size that overlaps the batch before it:
/// the elements of the overlap are computed a second time from the output already written, `twice`
/// (op applied to its own result). Out of place the overlap only repeats the same values.
inline std::vector<Mistake> overlapping_last_batch(std::size_t n,
                                                   std::function<double(std::size_t)> right,
                                                   std::function<double(std::size_t)> twice) {
  const std::size_t full = n - n % kLanes;
  if (n % kLanes == 0 || n < kLanes) return {};
  const std::size_t first = n - kLanes;
  return {{"the answer, but elements " + std::to_string(first) + " to " + std::to_string(full - 1) +
               " computed twice, the second time from the output (in place, out is a): the tail "
               "done as one more whole batch at n - Batch::size = " +
               std::to_string(first) + ", overlapping the batch before it",
           "a batch that overlaps one already stored reads, in place, what that batch wrote, and "
           "applies the operation again. Finish the last n % Batch::size elements with the scalar "
           "tail loop (or a masked batch), not with an overlapping whole batch.",
           [=](std::size_t i) { return i >= first && i < full ? twice(i) : right(i); }}};
}

// --- dot, euclidean_distance ---------------------------------------------------------------------
//
// A reduction's check accepts a window as wide as the rounding error of the right sum. A wrong sum
// can be larger than the right one (a term counted 16 times), and then its own rounding does not
// fit that window: those entries add their terms as the wrong code does, in float32, so that they
// are exact where the mistake shows first (the smallest n, all in the scalar tail).

/// The mistakes of a float32 sum of n terms, result = finish(sum of term(i)), named with `terms`
/// ("products" for dot, "squared differences" for euclidean_distance). term(i) is exact (float64),
/// rounded(i) the float32 term as the kernel computes it.
inline std::vector<Mistake> sum_loop(std::size_t n, std::function<double(std::size_t)> term,
                                     std::function<float(std::size_t)> rounded,
                                     std::function<double(double)> finish,
                                     const std::string& terms) {
  auto sum = [term](std::size_t first, std::size_t last) {
    double s = 0;
    for (std::size_t i = first; i < last; ++i) s += term(i);
    return s;
  };
  const std::size_t full = n - n % kLanes;  // where the scalar tail starts
  std::vector<Mistake> list = {
      {"the tail's " + terms + " each counted " + std::to_string(kLanes) + " times (Batch::size)",
       "`acc += a[i] * b[i]` with a Batch acc adds the float to every lane of acc, so the "
       "reduction counts it once per lane. Reduce the lanes first (xsimd::hadd), then add the "
       "tail to that float.",
       [=](std::size_t) {
         float tail = 0;  // what every lane gains from the tail
         for (std::size_t i = full; i < n; ++i) tail += rounded(i);
         return finish(sum(0, full) + static_cast<double>(kLanes) * tail);
       }},
      {"lane 0 of the accumulator, without the other " + std::to_string(kLanes - 1) + " lanes",
       "acc.get(0) (or acc[0]) is one lane of the accumulator: each lane holds the sum of every " +
           std::to_string(kLanes) +
           "th term. Add all the lanes together with xsimd::hadd(acc), then add the tail.",
       [=](std::size_t) {
         double s = sum(full, n);
         for (std::size_t i = 0; i < full; i += kLanes) s += term(i);
         return finish(s);
       }},
      {"the sum with its first term counted twice",
       "the accumulator starts at the first term and the loop at index 0 as well: start the sum at "
       "zero (Batch(0.0f)).",
       [=](std::size_t) { return finish(n == 0 ? 0.0 : sum(0, n) + term(0)); }},
      {"only the last of the " + terms,
       "the sum is overwritten by each term (= instead of +=): add each term to it.",
       [=](std::size_t) { return finish(n == 0 ? 0.0 : rounded(n - 1)); }},
  };
  if (full > 0)
    list.push_back({"the sum with the whole batches' " + terms +
                        " counted twice: the tail loop restarted at 0",
                    "the scalar tail must go on where the SIMD loop stopped, at i = n - n % "
                    "Batch::size; starting it at 0 adds every term of the whole batches again. "
                    "Keep one index for both loops.",
                    [=](std::size_t) {
                      float tail = 0;  // the scalar loop, from 0 to n, in float32
                      for (std::size_t i = 0; i < n; ++i) tail += rounded(i);
                      return finish(sum(0, full) + tail);
                    }});
  if (full > 0 && n > full)
    list.push_back({"the first " + std::to_string(n - full) + " " + terms +
                        " in place of the tail's: the tail loop indexed from 0",
                    "the scalar tail runs n % Batch::size times but reads elements 0, 1, ... "
                    "instead of the last ones: index it from where the SIMD loop stopped.",
                    [=](std::size_t) { return finish(sum(0, full) + sum(0, n - full)); }});
  // k accumulators added into the total before a cleanup loop of single batches, which then adds
  // into one of them, not into the total: the whole batches after the last group of k are lost.
  for (std::size_t k : {std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    const std::size_t grouped = n / (k * kLanes) * (k * kLanes);
    if (grouped == 0 || full == grouped) continue;
    list.push_back({"the sum without the whole batches after the last group of " +
                        std::to_string(k) + " (elements " + std::to_string(grouped) + " to " +
                        std::to_string(full - 1) + ")",
                    "the loop over groups of " + std::to_string(k) +
                        " batches stops at the last whole group; the batches left after it are "
                        "added into an accumulator that is no longer part of the result (the "
                        "accumulators were added together before that loop ran). Combine the "
                        "accumulators after every loop over batches, then reduce, then add the "
                        "tail.",
                    [=](std::size_t) { return finish(sum(0, grouped) + sum(full, n)); }});
  }
  // A loop unrolled over u accumulators whose accumulator k reads its batch at i + k * step, not
  // i + k * Batch::size: the batches of one step overlap, some terms counted several times, others
  // never. (The batches left after the unrolled loop, and the tail, as they should be.)
  for (std::size_t u : {std::size_t{2}, std::size_t{4}, std::size_t{8}})
    for (std::size_t step : {std::size_t{1}, std::size_t{2}, std::size_t{4}, kLanes / 2}) {
      const std::size_t unrolled = n / (u * kLanes) * (u * kLanes);
      if (step == 0 || step >= kLanes || unrolled == 0) continue;
      list.push_back(
          {"a loop unrolled over " + std::to_string(u) +
               " accumulators whose accumulator k reads "
               "its batch at i + k * " +
               std::to_string(step) + " instead of i + k * " + std::to_string(kLanes) +
               " (Batch::size)",
           "in a loop unrolled over several accumulators, accumulator k reads the batch k batches "
           "further on, i + k * Batch::size, and the loop steps by the number of accumulators "
           "times Batch::size. At i + k * " +
               std::to_string(step) + " the batches of one step overlap: some " + terms +
               " are added several times and others never.",
           [=](std::size_t) {
             double s = 0;
             for (std::size_t i = 0; i < unrolled; i += u * kLanes)
               for (std::size_t k = 0; k < u; ++k) s += sum(i + k * step, i + k * step + kLanes);
             return finish(s + sum(unrolled, n));
           }});
    }
  // Lanes summed by hand up to a number written in the code, smaller than this build's batch.
  for (std::size_t width : {std::size_t{4}, std::size_t{8}}) {
    if (width >= kLanes || full == 0) continue;
    list.push_back({"lanes 0 to " + std::to_string(width - 1) + " of the accumulator's " +
                        std::to_string(kLanes) + ", without the others",
                    "the lanes are summed up to " + std::to_string(width) +
                        ", a lane count written in the code, while this build's Batch::size is " +
                        std::to_string(kLanes) +
                        ". Reduce the accumulator with xsimd::hadd(acc) (or loop to "
                        "Batch::size).",
                    [=](std::size_t) {
                      double s = sum(full, n);
                      for (std::size_t i = 0; i < full; ++i)
                        if (i % kLanes < width) s += term(i);
                      return finish(s);
                    }});
  }
  // Overlapping batches: a loop that loads whole batches but steps by a lane count written in the
  // code, smaller than this build's batch, so each term is added several times. The tail starts
  // where that loop stopped.
  for (std::size_t step : {std::size_t{4}, std::size_t{8}}) {
    if (step >= kLanes || n < kLanes) continue;
    list.push_back({"batches of " + std::to_string(kLanes) + " " + terms +
                        " that overlap: the loop steps by " + std::to_string(step) +
                        ", so most terms are added " + std::to_string(kLanes / step) + " times",
                    "the loop steps by " + std::to_string(step) +
                        ", a lane count written in the code (AVX2's 8 floats), while this "
                        "build's Batch::size is " +
                        std::to_string(kLanes) + ". Step by Batch::size, never by a number.",
                    [=](std::size_t) {
                      double s = 0;
                      std::size_t i = 0;
                      for (; i + kLanes <= n; i += step) s += sum(i, i + kLanes);
                      return finish(s + sum(i, n));
                    }});
  }
  // One batch for every two: a loop that steps by twice the batch (a lane count hard-coded for
  // wider registers) and adds one batch per step.
  if (n >= 2 * kLanes) {
    const std::size_t stepped = n / (2 * kLanes) * (2 * kLanes);
    list.push_back({"every other batch of " + terms + " left out: the loop steps by " +
                        std::to_string(2 * kLanes) + ", a batch holds " + std::to_string(kLanes),
                    "Step by Batch::size (" + std::to_string(kLanes) +
                        " in this build), not by a number written in the code.",
                    [=](std::size_t) {
                      double s = sum(stepped, n);
                      for (std::size_t i = 0; i < stepped; ++i)
                        if (i % (2 * kLanes) < kLanes) s += term(i);
                      return finish(s);
                    }});
  }
  return list;
}

/// A loop unrolled over u accumulators in which accumulator k (k >= 1) reads one operand's batch at
/// i + k * Batch::size and the other's at i: its terms pair a[i + k * W + l] with b[i + l] (or the
/// reverse), a copy-paste slip in the unrolled body. pair(ia, ib) is the term of a[ia] and b[ib];
/// the batches after the unrolled loop, and the tail, as they should be.
inline std::vector<Mistake> unrolled_operand_left_behind(
    std::size_t n, std::function<double(std::size_t, std::size_t)> pair,
    std::function<double(double)> finish) {
  std::vector<Mistake> list;
  for (std::size_t u : {std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    const std::size_t unrolled = n / (u * kLanes) * (u * kLanes);
    if (unrolled == 0) continue;
    for (const bool b_behind : {true, false}) {
      const std::string behind = b_behind ? "b" : "a", ahead = b_behind ? "a" : "b";
      list.push_back(
          {"a loop unrolled over " + std::to_string(u) + " accumulators whose " +
               (u == 2 ? std::string("accumulator 1 reads ")
                       : "accumulators 1 to " + std::to_string(u - 1) + " read ") +
               behind + "'s batch at i, not i + k * " + std::to_string(kLanes) +
               " (Batch::size), while " + ahead + "'s is read right",
           "in the unrolled loop, accumulator k loads both operands at the same offset, i + k * "
           "Batch::size: a load of " +
               behind + " at i pairs its elements with " + ahead +
               "'s of the next batches (a copy-paste slip in the unrolled body).",
           [=](std::size_t) {
             double s = 0;
             for (std::size_t i = 0; i < unrolled; i += u * kLanes)
               for (std::size_t k = 0; k < u; ++k)
                 for (std::size_t l = 0; l < kLanes; ++l) {
                   const std::size_t right = i + k * kLanes + l, left_behind = i + l;
                   s += b_behind ? pair(right, left_behind) : pair(left_behind, right);
                 }
             for (std::size_t i = unrolled; i < n; ++i) s += pair(i, i);
             return finish(s);
           }});
    }
  }
  return list;
}

/// A loop unrolled over u accumulators in which one accumulator k (k >= 1) multiplies its own
/// batch's factor by the factor of another batch j of the same step (batch 0, or the one before
/// it, k - 1): fma(x_k, y_j, acc_k) where fma(x_k, y_k, acc_k) is meant, a slip in one line of the
/// unrolled body. product(i, j) is the product of element i's first factor and element j's second
/// (a[i] * b[j]; for a distance, d[i] * d[j]); `first`, `second`: the factors' names; symmetric:
/// the two factors are the same quantity, so which one comes from batch j makes no difference.
inline std::vector<Mistake> unrolled_factor_from_another_batch(
    std::size_t n, std::function<double(std::size_t, std::size_t)> product,
    std::function<double(double)> finish, const std::string& first, const std::string& second,
    bool symmetric) {
  std::vector<Mistake> list;
  for (std::size_t u : {std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    const std::size_t unrolled = n / (u * kLanes) * (u * kLanes);
    if (unrolled == 0) continue;
    for (std::size_t k = 1; k < u; ++k)
      for (const std::size_t j :
           k == 1 ? std::vector<std::size_t>{0} : std::vector<std::size_t>{0, k - 1}) {
        for (const bool first_from_j : {false, true}) {
          if (symmetric && first_from_j) continue;
          const std::string from_j = first_from_j ? first : second,
                            own = first_from_j ? second : first;
          list.push_back(
              {"a loop unrolled over " + std::to_string(u) + " accumulators whose accumulator " +
                   std::to_string(k) + " multiplies " + own + " of its own batch (i + " +
                   std::to_string(k) + " * " + std::to_string(kLanes) + ") by " + from_j +
                   " of batch " + std::to_string(j) + " (i + " + std::to_string(j) + " * " +
                   std::to_string(kLanes) + ")",
               "each accumulator multiplies the two factors of its own batch: fma(x" +
                   std::to_string(k) + ", y" + std::to_string(k) + ", acc" + std::to_string(k) +
                   "), not another batch's (a slip in one line of the unrolled body: check "
                   "every name in it).",
               [=](std::size_t) {
                 double s = 0;
                 for (std::size_t i = 0; i < unrolled; i += u * kLanes)
                   for (std::size_t b = 0; b < u; ++b)
                     for (std::size_t l = 0; l < kLanes; ++l) {
                       const std::size_t self = i + b * kLanes + l, other = i + j * kLanes + l;
                       s += b != k         ? product(self, self)
                            : first_from_j ? product(other, self)
                                           : product(self, other);
                     }
                 for (std::size_t i = unrolled; i < n; ++i) s += product(i, i);
                 return finish(s);
               }});
        }
      }
  }
  return list;
}

/// A reduction whose accumulator update is wrong, tried for the usual numbers of accumulators u
/// (1, 2, 4, 8) and fed as an unrolled loop feeds them: steps of u batches, then the whole batches
/// left over into the first accumulator, then the scalar tail (right). Lane l of an accumulator
/// becomes update(acc, x, y) with (x, y) = factors(i) of its element i; `term` is the tail's
/// element, `finish` what the function makes of the sum.
inline std::vector<Mistake> unrolled_update(
    std::size_t n, std::function<std::pair<float, float>(std::size_t)> factors,
    std::function<float(float, float, float)> update, std::function<double(std::size_t)> term,
    std::function<double(double)> finish, const std::string& what, const std::string& advice) {
  std::vector<Mistake> list;
  if (n < kLanes) return list;
  for (const std::size_t u : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}})
    list.push_back({what, advice, [=](std::size_t) {
                      std::vector<float> acc(u * kLanes, 0.0f);
                      const auto add = [&](std::size_t k, std::size_t at) {
                        for (std::size_t l = 0; l < kLanes; ++l) {
                          const auto [x, y] = factors(at + l);
                          acc[k * kLanes + l] = update(acc[k * kLanes + l], x, y);
                        }
                      };
                      std::size_t i = 0;
                      for (; i + u * kLanes <= n; i += u * kLanes)
                        for (std::size_t k = 0; k < u; ++k) add(k, i + k * kLanes);
                      for (; i + kLanes <= n; i += kLanes) add(0, i);
                      double s = 0;
                      for (const float v : acc) s += v;
                      for (; i < n; ++i) s += term(i);
                      return finish(s);
                    }});
  return list;
}

/// The other fused operations in place of fma(x, y, acc) = x * y + acc: fms (x * y - acc), fnma
/// (acc - x * y) and fnms (-(x * y) - acc), each a sign away from the sum. `product` names x * y.
inline std::vector<Mistake> wrong_fused_update(
    std::size_t n, std::function<std::pair<float, float>(std::size_t)> factors,
    std::function<double(std::size_t)> term, std::function<double(double)> finish,
    const std::string& product) {
  struct Variant {
    const char* name;
    const char* definition;  // what the operation computes of (x, y, z)
    const char* before;      // the step, around the product: before + product + after
    const char* after;
    const char* effect;  // what that does to the sum
    float (*update)(float, float, float);
  };
  static constexpr Variant kVariants[] = {
      {"fms", "x * y - z", "", " - acc",
       "each step turns the sign of the running sum: the result is right only while no "
       "accumulator takes a second batch",
       [](float acc, float x, float y) { return std::fma(x, y, -acc); }},
      {"fnma", "-(x * y) + z", "acc - ", "",
       "each step subtracts its products from the sum: what the batches add comes out negated",
       [](float acc, float x, float y) { return std::fma(-x, y, acc); }},
      {"fnms", "-(x * y) - z", "-(", ") - acc",
       "each step negates both its products and the running sum",
       [](float acc, float x, float y) { return -std::fma(x, y, acc); }}};
  std::vector<Mistake> list;
  for (const Variant& v : kVariants)
    for (Mistake& m : unrolled_update(
             n, factors, v.update, term, finish,
             std::string("each batch's step made with xsimd::") + v.name + ", " + v.before +
                 product + v.after + ", where the sum needs " + product + " + acc",
             std::string("xsimd::") + v.name + "(x, y, z) computes " + v.definition + ", so " +
                 v.effect + ". Sum with xsimd::fma(x, y, acc), which is x * y + acc."))
      list.push_back(std::move(m));
  return list;
}

inline std::vector<Mistake> dot(std::span<const float> a, std::span<const float> b) {
  std::vector<Mistake> list = sum_loop(
      a.size(), [a, b](std::size_t i) { return double(a[i]) * double(b[i]); },
      [a, b](std::size_t i) { return a[i] * b[i]; }, [](double s) { return s; }, "products");
  list.push_back({"the sum of a[i] * a[i]: b is never read",
                  "the second operand is loaded from a again (a copy-paste slip): load it from b.",
                  [a](std::size_t) {
                    float s = 0;  // |a|^2 may be far larger than the window of a . b: see above
                    for (const float v : a) s += v * v;
                    return static_cast<double>(s);
                  }});
  for (Mistake& m : unrolled_operand_left_behind(
           a.size(),
           [a, b](std::size_t ia, std::size_t ib) { return double(a[ia]) * double(b[ib]); },
           [](double s) { return s; }))
    list.push_back(std::move(m));
  for (Mistake& m : unrolled_factor_from_another_batch(
           a.size(), [a, b](std::size_t i, std::size_t j) { return double(a[i]) * double(b[j]); },
           [](double s) { return s; }, "a", "b", false))
    list.push_back(std::move(m));
  // The FMA's operands in the wrong places: fma(acc, x, y) is acc * x + y, so each batch
  // multiplies the running sum instead of adding its products to it.
  for (const bool times_a : {true, false}) {
    const auto factors = [a, b, times_a](std::size_t i) {
      return times_a ? std::pair{a[i], b[i]} : std::pair{b[i], a[i]};
    };
    for (Mistake& m : unrolled_update(
             a.size(), factors, [](float acc, float x, float y) { return std::fma(acc, x, y); },
             [a, b](std::size_t i) { return double(a[i]) * double(b[i]); },
             [](double s) { return s; },
             std::string("fma(acc, ") + (times_a ? "a, b): acc * a + b" : "b, a): acc * b + a") +
                 " for each batch, not a * b + acc",
             "xsimd::fma(x, y, z) computes x * y + z: the accumulator is the third operand, "
             "fma(a_batch, b_batch, acc). With acc first, each batch multiplies the running sum "
             "instead of adding its products to it."))
      list.push_back(std::move(m));
  }
  for (Mistake& m : wrong_fused_update(
           a.size(),
           [a, b](std::size_t i) {
             return std::pair{a[i], b[i]};
           },
           [a, b](std::size_t i) { return double(a[i]) * double(b[i]); },
           [](double s) { return s; }, "a * b"))
    list.push_back(std::move(m));
  return list;
}

inline std::vector<Mistake> euclidean_distance(std::span<const float> a, std::span<const float> b) {
  std::vector<Mistake> list = sum_loop(
      a.size(),
      [a, b](std::size_t i) {
        const double d = double(a[i]) - double(b[i]);
        return d * d;
      },
      [a, b](std::size_t i) {
        const float d = a[i] - b[i];
        return d * d;
      },
      [](double s) { return std::sqrt(std::max(s, 0.0)); }, "squared differences");
  for (Mistake& m : unrolled_operand_left_behind(
           a.size(),
           [a, b](std::size_t ia, std::size_t ib) {
             const double d = double(a[ia]) - double(b[ib]);
             return d * d;
           },
           [](double s) { return std::sqrt(std::max(s, 0.0)); }))
    list.push_back(std::move(m));
  for (Mistake& m : unrolled_factor_from_another_batch(
           a.size(),
           [a, b](std::size_t i, std::size_t j) {
             return (double(a[i]) - double(b[i])) * (double(a[j]) - double(b[j]));
           },
           [](double s) { return std::sqrt(std::max(s, 0.0)); }, "the difference", "the difference",
           true))
    list.push_back(std::move(m));
  // The square root of whatever the wrong update left, NaN where that is negative, as the
  // kernel's std::sqrt gives.
  for (Mistake& m : wrong_fused_update(
           a.size(),
           [a, b](std::size_t i) {
             const float d = a[i] - b[i];
             return std::pair{d, d};
           },
           [a, b](std::size_t i) {
             const double d = double(a[i]) - double(b[i]);
             return d * d;
           },
           [](double s) { return std::sqrt(s); }, "d * d"))
    list.push_back(std::move(m));
  // The scalar tail written apart from the SIMD loop, its difference not squared.
  const std::size_t n = a.size(), full = n - n % kLanes;
  if (n > full) {
    const auto tail_of = [a, b, n, full](bool absolute) {
      return [a, b, n, full, absolute](std::size_t) {
        double s = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double d = double(a[i]) - double(b[i]);
          s += i < full ? d * d : (absolute ? std::fabs(d) : d);
        }
        return std::sqrt(std::max(s, 0.0));
      };
    };
    const std::string advice =
        "the scalar tail must add the same term as the SIMD loop: d = a[i] - b[i], then d * d.";
    list.push_back(
        {"the tail's differences added as |a[i] - b[i]|, not squared", advice, tail_of(true)});
    list.push_back(
        {"the tail's differences added as a[i] - b[i], not squared", advice, tail_of(false)});
  }
  // The square root taken of each lane of the accumulator (xsimd::sqrt before hadd), and of the
  // tail's sum or each tail term on its own: a sum of square roots, not the root of the sum.
  if (full > kLanes) {  // (with one element per lane it is the Manhattan distance, below)
    for (bool tail_per_element : {false, true}) {
      const std::string tail = tail_per_element ? "each tail element's |a[i] - b[i]|"
                                                : "the square root of the tail's sum";
      list.push_back(
          {"the square roots of the " + std::to_string(kLanes) +
               " lanes' partial sums added up (plus " + tail + ")",
           "a distance takes one square root, of the whole sum: add the lanes together first "
           "(xsimd::hadd(acc)), add the tail's d * d, then take std::sqrt once.",
           [a, b, n, full, tail_per_element](std::size_t) {
             std::vector<double> lane(kLanes, 0.0);
             double tail_sum = 0, tail_roots = 0;
             for (std::size_t i = 0; i < n; ++i) {
               const double d = double(a[i]) - double(b[i]);
               if (i < full)
                 lane[i % kLanes] += d * d;
               else
                 tail_sum += d * d, tail_roots += std::fabs(d);
             }
             double s = tail_per_element ? tail_roots : std::sqrt(tail_sum);
             for (double l : lane) s += std::sqrt(l);
             return s;
           }});
    }
  }
  // The expanded square, sqrt(a.a - 2 a.b + b.b): exact in float64, but in float32 its three sums
  // are each rounded at the scale of |a|^2 + |b|^2, and for nearby vectors their difference cancels
  // to a few bits. Its answer is the right one; what names it is an error as large as that
  // cancellation allows and larger than the direct sum's.
  {
    double expanded = 0;  // sum of a^2 + 2|ab| + b^2: what its rounding error scales with
    double right = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = a[i], y = b[i];
      expanded += x * x + 2 * std::fabs(x * y) + y * y;
      right += (x - y) * (x - y);
    }
    const double distance = std::sqrt(right);
    // An error e in the squared distance moves the root by about e / (2 d); at d = 0, by sqrt(e).
    const double floor = std::sqrt(workbook::gamma_float(static_cast<double>(n + 2)) * expanded);
    const double scale = expanded / (2 * std::max(distance, floor));
    list.push_back(
        {"the distance as sqrt(a.a - 2 a.b + b.b), the square expanded: its error is that of "
         "three large float32 sums that cancel",
         "for nearby vectors a.a, a.b and b.b are almost equal, and their difference keeps only "
         "the few bits in which they differ. Subtract first: d = a[i] - b[i], accumulate d * d, "
         "then take the square root.",
         [distance](std::size_t) { return distance; }, [scale](std::size_t) { return scale; }});
  }
  list.push_back({"the sum of |a[i] - b[i]| (the Manhattan distance)",
                  "the Euclidean distance squares each difference and takes one square root of "
                  "the sum: accumulate d * d (xsimd::fma(d, d, acc)), then std::sqrt at the end.",
                  [a, b](std::size_t) {
                    float s = 0;  // in float32, as the kernel adds: see above
                    for (std::size_t i = 0; i < a.size(); ++i) s += std::fabs(a[i] - b[i]);
                    return static_cast<double>(s);
                  }});
  return list;
}

}  // namespace lab01::mistakes
