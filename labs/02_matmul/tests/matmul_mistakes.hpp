#pragma once
// The mistakes students make in a first matmul, each with the wrong C it gives, computed exactly in
// float64 from the same A and B as the oracle. When a check fails, C is compared with each one in
// order (most specific first) and the first that matches is named, with what to change (see
// workbook::Mistake). Read them: they are the bugs this lab's tests are built to catch.
#include "matmul.hpp"

#include <workbook/check.hpp>

#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace lab02::mistakes {

/// What a wrong C is computed from: the inputs, the shape, the right answer, and what C held before
/// the call (empty when it held the harness's poison: then nothing can be built on it).
struct Inputs {
  std::span<const float> a, b;
  MatmulShape shape;
  std::span<const double> want;        ///< the right C, row-major, n columns (the oracle's)
  std::span<const double> want_scale;  ///< sum over p of |a_ip| |b_pj|, per element (the oracle's)
  std::span<const float> c_before;     ///< C's buffer before the call (ldc apart), or empty
  /// Element i of the C the kernel wrote (row-major, n columns), NaN where it was never written;
  /// empty: every entry is kept (see catalogue).
  std::function<double(std::size_t)> got;
};

/// Each entry gives, besides its answer, what the rounding error of its float32 evaluation scales
/// with (Mistake::scale): a wrong sum rounds like any sum of its own terms, so it is matched within
/// gamma_k times the sum of their magnitudes, not of the right terms'.
using Entry = workbook::Mistake;

namespace detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Element `at` of a buffer as a double; NaN past its end (what a read there gives is unknowable, so
// no output matches it).
inline double element(std::span<const float> m, std::size_t at) {
  return at < m.size() ? static_cast<double>(m[at]) : kNaN;
}

// The entry for C(r, c) = sum over p in [first, last) of A[a(r, p)] * B[b(p, c)], with flat
// indices into the buffers: each mistake of this kind is the product with other indices or other
// bounds.
template <class AIndex, class BIndex>
Entry sum_of_products(const Inputs& in, std::string what, std::string advice, std::size_t first,
                      std::size_t last, AIndex a, BIndex b) {
  const std::size_t n = in.shape.n;
  auto sum = [in, n, first, last, a, b](std::size_t i, bool magnitudes) {
    double s = 0;
    for (std::size_t p = first; p < last; ++p) {
      const double term = element(in.a, a(i / n, p)) * element(in.b, b(p, i % n));
      s += magnitudes ? std::fabs(term) : term;
    }
    return s;
  };
  return {std::move(what), std::move(advice), [sum](std::size_t i) { return sum(i, false); },
          [sum](std::size_t i) { return sum(i, true); }};
}

// Block sizes a loop over k is usually blocked by: the mistakes of blocking are tried with each.
inline std::vector<std::size_t> block_sizes() {
  return {4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 1024};
}

// Does C match the entry on every element, within the rounding of the entry's own float32 sum
// (gamma_(k+1) times the sum of its own |terms|)? The shared check allows the right answer's bound
// as well, which at large k is wider than a wrong answer of small terms (a C of zeros would pass
// for "only the last product"): a mistake is named only when it reproduces the values themselves.
/// Where C is wrong, the entry must explain the error: be at least four times closer to C than the
/// right answer is. A wrong answer near the right one (one product too few among 20000, whose
/// window is some thirty products wide) would otherwise "match" every small error.
inline bool reproduces(const Entry& e, const std::function<double(std::size_t)>& got,
                       const std::function<double(std::size_t)>& right, std::size_t elements,
                       std::size_t k) {
  const double gamma = workbook::gamma_float(static_cast<double>(k + 1));
  const double tiny = std::numeric_limits<float>::denorm_min();
  // NaN alone is no evidence: every wrong index that lands in the NaN padding between rows gives
  // NaN there, so a C of NaN only would be "reproduced" by each of them.
  bool a_number = false;
  for (std::size_t i = 0; i < elements; ++i) {
    const double want = e.answer(i), g = got(i);
    if (std::isnan(want) != std::isnan(g)) return false;
    if (std::isnan(want)) continue;
    a_number = true;
    const double window = 2 * gamma * (e.scale ? e.scale(i) : std::fabs(want)) + tiny;
    if (!(std::fabs(g - want) <= window)) return false;
    if (std::fabs(g - right(i)) > window && !(4 * std::fabs(g - want) <= std::fabs(g - right(i))))
      return false;
  }
  return a_number;
}

}  // namespace detail

/// The catalogue for C = A * B, in the order they are tried.
inline std::vector<Entry> catalogue(const Inputs& in) {
  using detail::sum_of_products;
  const MatmulShape s = in.shape;
  std::vector<Entry> list;
  // The right indices: A(i, p) is a[i * lda + p], B(p, j) is b[p * ldb + j].
  const auto a_ip = [s](std::size_t i, std::size_t p) { return i * s.lda + p; };
  const auto b_pj = [s](std::size_t p, std::size_t j) { return p * s.ldb + j; };
  const auto want = [in](std::size_t i) { return in.want[i]; };
  const auto right_scale = [in, s, a_ip, b_pj](std::size_t i) {
    double m = 0;
    for (std::size_t p = 0; p < s.k; ++p)
      m += std::fabs(detail::element(in.a, a_ip(i / s.n, p)) *
                     detail::element(in.b, b_pj(p, i % s.n)));
    return m;
  };

  // What C held before the call, when the test knows it (a test that fills C with stale values).
  bool before_known = !in.c_before.empty();
  for (float v : in.c_before) before_known = before_known && std::isfinite(v);
  if (before_known) {
    const auto before = [in, s](std::size_t i) {
      return static_cast<double>(in.c_before[i / s.n * s.ldc + i % s.n]);
    };
    list.push_back({"C as it was before the call",
                    "matmul wrote nothing. With k = 0 every element of C is an empty sum, 0: a "
                    "kernel that only adds into C, or returns early when k == 0, leaves C as it "
                    "was. Write every element of C, zeros included.",
                    before, [](std::size_t) { return 0.0; }});
    list.push_back(
        {"C's earlier contents plus A * B (C += A * B)",
         "matmul overwrites C (as sgemm with beta = 0): set each element of C to 0 "
         "before you accumulate into it (or start each sum from 0 in a register and "
         "store it), instead of adding to what the caller left there.",
         [before, want](std::size_t i) { return before(i) + want(i); },
         // A sum of k + 1 terms, the first of them what C held.
         [before, right_scale](std::size_t i) { return std::fabs(before(i)) + right_scale(i); }});
  }

  if (s.k >= 2)
    list.push_back(sum_of_products(
        in, "only the last product of each sum, a[i][k-1] * b[k-1][j]",
        "C was assigned (=) in the loop over p instead of added to (+=): each p replaced the one "
        "before. Set C to 0 first, then c[i][j] += a[i][p] * b[p][j]; or sum into a local "
        "variable and store it after the p loop.",
        s.k - 1, s.k, a_ip, b_pj));

  if (s.k >= 2)
    list.push_back(sum_of_products(
        in, "each sum without its first product, a[i][0] * b[0][j] (the loop over p starts at 1)",
        "the loop over p must start at 0 (or at the block's first p0): starting at 1 leaves out "
        "the first product of every sum, as a sum started from the first term and then looped from "
        "1 would not.",
        1, s.k, a_ip, b_pj));

  // The loop over the rows of C bounded by n (the columns) instead of m: rows from n on are never
  // computed; zero where C was cleared first, unwritten where it was not. Where n >= m it computes
  // every row: listed all the same, so that a shape where it is right and the output is not rules
  // it out (a tile's zero padding read at n = 1 looks like it).
  if (s.n > 0 && in.want_scale.size() == in.want.size()) {
    for (const bool cleared : {true, false}) {
      list.push_back(
          {"the first " + std::to_string(s.n) + " rows only, the rest " +
               (cleared ? "zero" : "never written") + ": the loop over rows stops at n = " +
               std::to_string(s.n) + ", not m = " + std::to_string(s.m),
           "the rows of C are counted by m (the rows of A), the columns by n: check the bound of "
           "every loop (and block) over rows, i < m and min(i0 + block, m).",
           [in, s, cleared](std::size_t i) {
             return i / s.n < s.n ? in.want[i] : (cleared ? 0.0 : detail::kNaN);
           },
           [in, s](std::size_t i) { return i / s.n < s.n ? in.want_scale[i] : 0.0; },
           cleared ? "rows bounded by n, the rest zero" : "rows bounded by n, the rest unwritten"});
    }
  }

  // A scalar loop for the columns after the last whole SIMD batch that restarts at the first
  // column (of the row, or of a block whose width is a multiple of the batch): the columns of the
  // whole batches get every product twice.
  if (in.want_scale.size() == in.want.size()) {
    for (const std::size_t lanes : {std::size_t{4}, std::size_t{8}, std::size_t{16}}) {
      const std::size_t whole = s.n - s.n % lanes;
      if (whole == 0 || whole == s.n) continue;
      list.push_back(
          {"columns 0 to " + std::to_string(whole - 1) + " (the whole batches of " +
               std::to_string(lanes) +
               ") with every product counted twice: the scalar loop for the last columns starts "
               "again at the first column",
           "the scalar loop after the SIMD loop must go on from the column where the SIMD loop "
           "stopped (keep one j for both loops), not from the row's or the block's first column.",
           [in, s, whole](std::size_t i) { return (i % s.n < whole ? 2 : 1) * in.want[i]; },
           [in, s, whole](std::size_t i) { return (i % s.n < whole ? 2 : 1) * in.want_scale[i]; }});
    }
  }

  // Indexing mistakes: an operand read as if transposed, C stored transposed, rows stepped by the
  // width instead of the leading dimension, the loop over p bounded by n.
  list.push_back(sum_of_products(
      in, "A * B with B read as if it were transposed (b[j * ldb + p])",
      "element (p, j) of B is b[p * ldb + j]: p picks the row, j the column. You read b[j * ldb + "
      "p], element (j, p): that is A * B^T.",
      0, s.k, a_ip, [s](std::size_t p, std::size_t j) { return j * s.ldb + p; }));
  list.push_back(sum_of_products(
      in, "A * B with A read as if it were transposed (a[p * lda + i])",
      "element (i, p) of A is a[i * lda + p]: i picks the row, p the column. You read a[p * lda + "
      "i], element (p, i): that is A^T * B.",
      0, s.k, [s](std::size_t i, std::size_t p) { return p * s.lda + i; }, b_pj));
  if (s.m == s.n)
    list.push_back(
        {"A * B stored transposed (element (i, j) at c[j * ldc + i])",
         "element (i, j) of C is c[i * ldc + j]: i picks the row. Check the order of your "
         "indices where you store into C (and in the loops over a tile).",
         [want, s](std::size_t i) { return want(i % s.n * s.n + i / s.n); },
         [right_scale, s](std::size_t i) { return right_scale(i % s.n * s.n + i / s.n); }});
  // The rows of A or B stepped by another of the shape's numbers than their own ld (k or n without
  // padding, or the ld of another matrix): each distinct wrong step once.
  const std::vector<std::pair<std::string, std::size_t>> steps = {
      {"k", s.k}, {"n", s.n}, {"lda", s.lda}, {"ldb", s.ldb}, {"ldc", s.ldc}};
  std::set<std::size_t> a_steps{s.lda}, b_steps{s.ldb};
  for (const auto& [name, step] : steps) {
    if (!a_steps.insert(step).second) continue;
    list.push_back(sum_of_products(
        in, "A * B with the rows of A read " + name + " apart instead of lda",
        "row i of A starts at a[i * lda]: lda = " + std::to_string(s.lda) +
            " here, and you stepped by " + name + " = " + std::to_string(step) +
            ". The elements between k and lda are padding (the tests put NaN there). Step between "
            "rows of A by lda.",
        0, s.k, [step](std::size_t i, std::size_t p) { return i * step + p; }, b_pj));
  }
  for (const auto& [name, step] : steps) {
    if (!b_steps.insert(step).second) continue;
    list.push_back(sum_of_products(
        in, "A * B with the rows of B read " + name + " apart instead of ldb",
        "row p of B starts at b[p * ldb]: ldb = " + std::to_string(s.ldb) +
            " here, and you stepped by " + name + " = " + std::to_string(step) +
            ". The elements between n and ldb are padding (the tests put NaN there). Step between "
            "rows of B by ldb.",
        0, s.k, a_ip, [step](std::size_t p, std::size_t j) { return p * step + j; }));
  }
  if (s.n != s.k)
    list.push_back(sum_of_products(
        in, "A * B with the loop over p running to n instead of k",
        "each element of C sums k = " + std::to_string(s.k) +
            " products, one per column of A (and row of B); your loop over p stops at n = " +
            std::to_string(s.n) + ", the number of columns of B and C.",
        0, s.n, a_ip, b_pj));

  // Blocking mistakes in the loop over p: the last, partial block skipped, or each block
  // overwriting C instead of adding to it. The block size is unknown: every usual one is tried,
  // each distinct cut once.
  std::set<std::size_t> cuts, starts;
  // A cut that is itself a usual block size: the first block may be the only full one.
  const auto first_block_is_the_cut = [](std::size_t cut) {
    for (std::size_t block : detail::block_sizes())
      if (block == cut) return true;
    return false;
  };
  for (std::size_t block : detail::block_sizes()) {
    const std::size_t cut = s.k / block * block;
    if (cut > 0 && cut < s.k && cuts.insert(cut).second)
      list.push_back(sum_of_products(
          in,
          "each sum stopped at p = " + std::to_string(cut) +
              ", the end of the last full block of k = " + std::to_string(s.k),
          "the last block of k is partial (k is no multiple of your block size) and your loop "
          "over blocks skips it: loop while p0 < k and end each block at min(p0 + block, k)." +
              std::string(first_block_is_the_cut(cut)
                              ? " (Here the first block is the only full one, so a loop over p "
                                "that runs to the block size, p < " +
                                    std::to_string(cut) +
                                    ", instead of to p0 + block gives the same C: end it at "
                                    "min(p0 + block, k).)"
                              : ""),
          0, cut, a_ip, b_pj));
  }
  for (std::size_t block : detail::block_sizes()) {
    const std::size_t start = s.k > 0 ? (s.k - 1) / block * block : 0;
    if (start > 0 && starts.insert(start).second)
      list.push_back(sum_of_products(
          in,
          "only the products from p = " + std::to_string(start) + " to k = " + std::to_string(s.k) +
              ", the last block of k",
          "each block of k replaced C instead of adding to it, so only the last block's sum is "
          "left. Zero C once, before the first block of k, then add each block's sums to C "
          "(load, add, store).",
          start, s.k, a_ip, b_pj));
  }
  // Only one block of k: the loop over p bounded by the block size (p < kc instead of p < p0 + kc),
  // so that every block after the first adds nothing; or the last full block alone (each block
  // replaced C, and the partial one was skipped).
  std::set<std::size_t> firsts;
  for (std::size_t block : detail::block_sizes())
    // (With k < 2 * block this is also the last full block, named above with both causes.)
    if (2 * block <= s.k && firsts.insert(block).second)
      list.push_back(sum_of_products(
          in,
          "only the products from p = 0 to " + std::to_string(block - 1) +
              ", the first block of k (k = " + std::to_string(s.k) + ")",
          "the blocks of k after the first add nothing: the loop over p inside a block runs to "
          "the block size (p < " +
              std::to_string(block) +
              ") instead of to the end of the block (p < min(p0 + block, k)). Offset both bounds "
              "by the block's start p0.",
          0, block, a_ip, b_pj));
  for (std::size_t block : detail::block_sizes()) {
    const std::size_t end = s.k / block * block;
    if (end > block && end < s.k)
      list.push_back(sum_of_products(
          in,
          "only the products from p = " + std::to_string(end - block) + " to " +
              std::to_string(end - 1) + ", the last full block of k (blocks of " +
              std::to_string(block) + ", k = " + std::to_string(s.k) + ")",
          "each block of k replaced C instead of adding to it, and the last, partial block was "
          "skipped. Zero C once before the first block and add each block's sums to it; loop "
          "while p0 < k and end each block at min(p0 + block, k).",
          end - block, end, a_ip, b_pj));
  }

  // A block of k whose start p0 is left out of one operand's index (the micro-kernel counts p from
  // 0 within the block and offsets only the other operand): every block reads the first block's
  // columns of A, or the first block's rows of B.
  std::set<std::size_t> offsets;
  for (std::size_t block : detail::block_sizes()) {
    if (block >= s.k || !offsets.insert(block).second) continue;
    list.push_back(sum_of_products(
        in,
        "every block of k (blocks of " + std::to_string(block) +
            ") multiplied with A's first block of columns: A's index leaves out the block's "
            "start p0",
        "inside a block of k, p counts from 0 and must be offset by the block's start in both "
        "operands: A(i, p0 + p), a[i * lda + p0 + p], as B(p0 + p, j). Where a packed panel of A "
        "is read, pack it from column p0.",
        0, s.k, [s, block](std::size_t i, std::size_t p) { return i * s.lda + p % block; }, b_pj));
    list.push_back(sum_of_products(
        in,
        "every block of k (blocks of " + std::to_string(block) +
            ") multiplied with B's first block of rows: B's index leaves out the block's start "
            "p0",
        "inside a block of k, p counts from 0 and must be offset by the block's start in both "
        "operands: B(p0 + p, j), b[(p0 + p) * ldb + j], as A(i, p0 + p). Where a packed panel of "
        "B is read, pack it from row p0.",
        0, s.k, a_ip, [s, block](std::size_t p, std::size_t j) { return p % block * s.ldb + j; }));
  }

  // A's column held at the block's first, p0, for every p of the block (the broadcast of A indexed
  // by the block's start where p is meant): each block's rows of B, summed, times one column of
  // A. With k within one block, C = A's column 0 times the column sums of B.
  std::set<std::size_t> held;
  for (std::size_t block : detail::block_sizes()) {
    const std::size_t used = std::min(block, s.k);
    if (s.k < 2 || !held.insert(used).second) continue;
    list.push_back(sum_of_products(
        in,
        used == s.k ? "A's column 0 for every p: a[i][0] * b[p][j], A read at the block's start "
                      "p0 instead of p"
                    : "A's column p0, the first of its block of k, for every p of the block "
                      "(blocks of " +
                          std::to_string(used) + "): A read at p0 instead of p",
        "inside a block of k, A's element changes with p like B's row: A(i, p), a[i * lda + p] "
        "(with p running from p0 to the block's end), not a[i * lda + p0].",
        0, s.k, [s, used](std::size_t i, std::size_t p) { return i * s.lda + p / used * used; },
        b_pj));
  }

  // A sum declared outside the loop over j (or over i and j) and never reset: each element of C
  // carries the sums of the elements before it in its row (or in the whole matrix).
  if (s.n >= 2 && in.want_scale.size() == in.want.size()) {
    // Prefix sums of C and of its scales, in row-major order; a row's running sum is the
    // difference of two of them.
    auto prefix = std::make_shared<std::vector<double>>(2 * (in.want.size() + 1), 0.0);
    for (std::size_t e = 0; e < in.want.size(); ++e) {
      (*prefix)[2 * e + 2] = (*prefix)[2 * e] + in.want[e];
      (*prefix)[2 * e + 3] = (*prefix)[2 * e + 1] + in.want_scale[e];
    }
    const auto running = [prefix, n = s.n](bool across_rows, bool magnitudes) {
      return [prefix, n, across_rows, magnitudes](std::size_t i) {
        const std::size_t first = across_rows ? 0 : i / n * n;
        return (*prefix)[2 * (i + 1) + magnitudes] - (*prefix)[2 * first + magnitudes];
      };
    };
    list.push_back({"each element plus the ones before it in its row (a running sum)",
                    "the sum is not reset for each element of C: it is declared (or set to 0) "
                    "outside the loop over j, so C(i, j) holds C(i, 0) + ... + C(i, j). Start "
                    "each element's sum at 0, inside the loop over j.",
                    running(false, false), running(false, true)});
    if (s.m >= 2)
      list.push_back({"each element plus every one before it in C (a running sum over the matrix)",
                      "the sum is set to 0 once, before the loops over i and j, and never reset, "
                      "so each element of C holds the sum of all the elements before it. Start "
                      "each element's sum at 0, inside the loop over j.",
                      running(true, false), running(true, true)});
  }

  // Register tiles: the tile's offset left out of an operand's index (every tile of rows reads
  // the first rows of A, every tile of columns the first columns of B), or the tile's
  // accumulators not reset between tiles along a row of C.
  if (in.want_scale.size() == in.want.size()) {
    const auto from = [in](auto source) -> Entry {
      return {"", "", [in, source](std::size_t i) { return in.want[source(i)]; },
              [in, source](std::size_t i) { return in.want_scale[source(i)]; }};
    };
    for (std::size_t rows : {2, 3, 4, 5, 6, 8, 12, 14, 16}) {
      if (rows >= s.m) break;
      Entry e = from([n = s.n, rows](std::size_t i) { return i / n % rows * n + i % n; });
      e.what = "row i of C computed from row i % " + std::to_string(rows) + " of A (tiles of " +
               std::to_string(rows) + " rows that all read the first)";
      e.advice =
          "the tile's first row i0 is left out of A's index: a tile of rows must read "
          "A(i0 + r, p), a[(i0 + r) * lda + p], not A(r, p).";
      list.push_back(std::move(e));
    }
    for (std::size_t cols : {4, 8, 16, 32, 48, 64}) {
      if (cols >= s.n) break;
      Entry e = from([n = s.n, cols](std::size_t i) { return i / n * n + i % n % cols; });
      e.what = "column j of C computed from column j % " + std::to_string(cols) +
               " of B (tiles of " + std::to_string(cols) + " columns that all read the first)";
      e.advice =
          "the tile's first column j0 is left out of B's index: a tile of columns must "
          "read B(p, j0 + c), b[p * ldb + j0 + c], not B(p, c).";
      list.push_back(std::move(e));
    }
    for (std::size_t cols : {4, 8, 16, 32, 48, 64}) {
      if (2 * cols > s.n) break;
      const auto carried = [in, n = s.n, cols](bool magnitudes) {
        return [in, n, cols, magnitudes](std::size_t i) {
          double sum = 0;  // this column and the same column of every tile before it in the row
          for (std::size_t e = i / n * n + i % n % cols; e <= i; e += cols)
            sum += magnitudes ? in.want_scale[e] : in.want[e];
          return sum;
        };
      };
      list.push_back(
          {"each tile of " + std::to_string(cols) +
               " columns plus the tiles before it in its row (accumulators not reset)",
           "the tile's accumulators carry over from one tile to the next: set them to zero at the "
           "start of every tile (inside the loop over tiles), not once before it.",
           carried(false), carried(true)});
    }
  }

  // A's element loaded as a batch instead of broadcast: lane l of each batch of columns multiplies
  // B by A[i][p + l], so lane 0 is right and every other lane reads A's row l elements further
  // on (past its end: the next row). The columns after the last whole batch, done one by one, are
  // right. Where a lane's load runs past the end of A, what it read is not known: the entry claims
  // nothing there (it takes the element C holds).
  if (const std::size_t lanes = workbook::simd_lanes<float>(); s.n >= 2 * lanes && s.k > 0) {
    const auto not_broadcast = [in, s, lanes](bool magnitudes) {
      return [in, s, lanes, magnitudes](std::size_t i) {
        const std::size_t r = i / s.n, c = i % s.n, lane = c < s.n / lanes * lanes ? c % lanes : 0;
        if (r * s.lda + s.k - 1 + lane >= in.a.size())
          return !in.got ? detail::kNaN : magnitudes ? std::fabs(in.got(i)) : in.got(i);
        double sum = 0;
        for (std::size_t p = 0; p < s.k; ++p) {
          const double term =
              detail::element(in.a, r * s.lda + p + lane) * detail::element(in.b, p * s.ldb + c);
          sum += magnitudes ? std::fabs(term) : term;
        }
        return sum;
      };
    };
    list.push_back(
        {"A's element loaded as a batch (lane l of the columns multiplies B by "
         "A[i][p + l]) where it is to be broadcast to every lane",
         "one element of A multiplies a whole batch of B's row: fill the batch with "
         "it, Batch(a[i * lda + p]) (xsimd::broadcast), rather than loading " +
             std::to_string(lanes) + " consecutive elements of A with load_unaligned.",
         not_broadcast(false), not_broadcast(true)});
  }

  // A float operand held in an integer variable (int a_ip = a[...]): truncated toward zero, so
  // that every value between -1 and 1 counts as 0 (the inputs are N(0, 1)).
  for (const auto& [cut_a, cut_b, which] :
       {std::tuple{true, false, "A's element"}, std::tuple{false, true, "B's element"},
        std::tuple{true, true, "both elements"}}) {
    auto sum = [in, s, a_ip, b_pj, cut_a, cut_b](std::size_t i, bool magnitudes) {
      double total = 0;
      for (std::size_t p = 0; p < s.k; ++p) {
        const double a = detail::element(in.a, a_ip(i / s.n, p));
        const double b = detail::element(in.b, b_pj(p, i % s.n));
        const double term = (cut_a ? std::trunc(a) : a) * (cut_b ? std::trunc(b) : b);
        total += magnitudes ? std::fabs(term) : term;
      }
      return total;
    };
    list.push_back({std::string("every product with ") + which +
                        " truncated to a whole number (a float held in an int variable)",
                    "an int keeps only the whole part of a value: every input between -1 and 1 "
                    "counts as 0. Hold A's and B's elements, and the sums, in float (or auto).",
                    [sum](std::size_t i) { return sum(i, false); },
                    [sum](std::size_t i) { return sum(i, true); }});
  }

  if (s.k > 0 && s.k < detail::block_sizes().back())
    list.push_back(
        {"zero in every element of C (k = " + std::to_string(s.k) + ", less than one block of k)",
         "C was set to zero but no product was added to it. If you block the loop "
         "over p: k = " +
             std::to_string(s.k) +
             " is smaller than your block, and a loop over full blocks only skips "
             "it. Loop while p0 < k and end each block at min(p0 + block, k).",
         [](std::size_t) { return 0.0; }, [](std::size_t) { return 0.0; }});

  // Keep only the entries that reproduce C itself (see detail::reproduces), and those whose C is
  // the right one here: a failing shape where a mistake gives the right C rules that mistake out.
  if (in.got) {
    const auto right = [&in](std::size_t i) { return in.want[i]; };
    std::erase_if(list, [&](const Entry& e) {
      return !detail::reproduces(e, in.got, right, s.m * s.n, s.k) &&
             !workbook::gives_the_right_answer(e, s.m * s.n, right);
    });
  }
  return list;
}

}  // namespace lab02::mistakes
