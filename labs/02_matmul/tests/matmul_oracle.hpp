#pragma once
// The float64 answer lab 02's matmul is checked against, the tolerance it is checked with, and the
// test inputs. Shared by the correctness tests, the perf cases and the solutions' version tests.
#include "matmul.hpp"
#include "matmul_mistakes.hpp"

#include <workbook/buffer.hpp>
#include <workbook/check.hpp>
#include <workbook/seed.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace lab02::oracle {

inline workbook::Where where() {
  return {"matmul", "labs/02_matmul/matmul.cpp", workbook::Model::simd};
}

/// "m = 7, n = 13, k = 17, lda = 17, ldb = 13, ldc = 13": the shape, for failure messages.
inline std::string describe(const MatmulShape& s) {
  return "m = " + std::to_string(s.m) + ", n = " + std::to_string(s.n) +
         ", k = " + std::to_string(s.k) + ", lda = " + std::to_string(s.lda) +
         ", ldb = " + std::to_string(s.ldb) + ", ldc = " + std::to_string(s.ldc);
}

/// Elements a rows x cols matrix with leading dimension ld occupies: its last row ends the buffer.
inline std::size_t elements(std::size_t rows, std::size_t cols, std::size_t ld) {
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}

/// A rows x cols matrix of N(0, 1) draws whose rows start ld apart, with NaN in the padding between
/// rows: a kernel that reads the padding (steps by cols instead of ld) gets NaN into C, and fails.
inline std::vector<float> random_matrix(std::size_t rows, std::size_t cols, std::size_t ld,
                                        workbook::Rng& rng) {
  std::vector<float> m(elements(rows, cols, ld), std::numeric_limits<float>::quiet_NaN());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) m[i * ld + j] = static_cast<float>(rng.normal());
  return m;
}

/// The exact product, what the rounding error of each element scales with, and the operands (for
/// the catalogue of mistakes, matmul_mistakes.hpp: they must outlive the check).
struct Product {
  std::vector<double> value;  ///< C, row-major, n columns, no padding
  std::vector<double> scale;  ///< sum over p of |a_ip| |b_pj|, per element
  std::span<const float> a, b;
  MatmulShape shape;
};

/// C = A * B in float64. A product of two floats is exact in float64, and the float64 sum of k such
/// terms is within k 2^-53 sum|terms| of the exact sum: 2^29 times finer than the float32
/// tolerance, so the oracle's own error does not matter. Loops in i-p-j order, so that it takes
/// well under a second at 1024^3 (the perf cases check that size).
inline Product multiply(std::span<const float> a, std::span<const float> b, const MatmulShape& s) {
  Product p{.value = std::vector<double>(s.m * s.n, 0.0),
            .scale = std::vector<double>(s.m * s.n, 0.0),
            .a = a,
            .b = b,
            .shape = s};
  for (std::size_t i = 0; i < s.m; ++i) {
    double* value = p.value.data() + i * s.n;
    double* scale = p.scale.data() + i * s.n;
    for (std::size_t k = 0; k < s.k; ++k) {
      const double x = a[i * s.lda + k], magnitude = std::fabs(x);
      const float* row = b.data() + k * s.ldb;
      for (std::size_t j = 0; j < s.n; ++j) {
        value[j] += x * row[j];
        scale[j] += magnitude * std::fabs(double(row[j]));
      }
    }
  }
  return p;
}

/// What the generic diagnosis cannot know about a matrix product: where poison and NaN come from.
inline std::string matmul_note(const Product& want, const workbook::GuardedBuffer<float>& c,
                               const MatmulShape& s) {
  std::size_t poison = 0, nan_for_finite = 0;
  for (std::size_t i = 0; i < s.m; ++i)
    for (std::size_t j = 0; j < s.n; ++j) {
      const float got = c[i * s.ldc + j];
      poison += workbook::Poison<float>::is_value(got);
      nan_for_finite += std::isnan(got) && !workbook::Poison<float>::is_value(got) &&
                        std::isfinite(want.value[i * s.n + j]);
    }
  std::ostringstream note;  // (not "literal" + std::string: GCC 12 warns about it at -O3, wrongly)
  if (poison > 0)
    note << " " << poison << " element" << (poison == 1 ? "" : "s")
         << " of C still hold the poison put there before the call: never written, or added to "
            "(C += ...) instead of overwritten. matmul overwrites C: set each element, or zero C "
            "before you accumulate.";
  if (nan_for_finite > 0)
    note << " " << nan_for_finite << " element" << (nan_for_finite == 1 ? " is" : "s are")
         << " NaN where the answer is finite: ";
  if (nan_for_finite > 0 && (s.lda > s.k || s.ldb > s.n))
    note << "the tests put NaN in the padding between rows of A and B, so your kernel read it: "
            "it steps from row to row by k or n instead of lda and ldb, or a loop over p (or a "
            "block of it) runs past k, or one over j past n (a bound such as min(p0 + block, n) "
            "where k was meant).";
  else if (nan_for_finite > 0)
    note << "a read of uninitialised memory (a tile or packing buffer not filled, or read past "
            "its end).";
  return note.str();
}

/// What a write past the edge of C says about the kernel: a tile at the right edge of C stored with
/// whole SIMD batches. Its writes end at the batch boundary after column n - 1, in every row: in
/// the padding when ldc > n, past the end of the buffer in the last row. "" when the writes end
/// elsewhere.
inline std::string edge_tile_note(const workbook::GuardedBuffer<float>& c, const MatmulShape& s) {
  if (s.m == 0 || s.n == 0) return "";
  // How far past column n - 1 the writes reach: in row 0's padding, or past the end of the last
  // row (a contiguous run from the end, counted by the canaries).
  std::size_t reach = 0;
  if (s.m > 1 && s.ldc > s.n) {
    while (s.n + reach < s.ldc && !c.is_poison(s.n + reach)) ++reach;
    if (s.n + reach == s.ldc) return "";  // the whole padding: rows stepped by n (see the check)
  } else {
    const workbook::GuardDamage d = c.damage();
    if (d.after == 0 || d.first_after != 0) return "";
    reach = d.after;
  }
  const std::size_t end = s.n + reach;
  std::size_t batch = 0;
  for (std::size_t w : {4, 8, 16, 32, 64})  // the smallest batch that ends there
    if (batch == 0 && end % w == 0 && reach < w) batch = w;
  if (batch == 0 || reach == 0) return "";
  std::ostringstream note;
  note << " Each row of C was written " << reach << " element" << (reach == 1 ? "" : "s")
       << " past its last column, up to column " << end - 1 << " (n = " << s.n << ", " << end
       << " a multiple of " << batch << "): the tile at the right edge of C stores whole SIMD "
       << "batches although only " << s.n % batch << " of " << batch
       << " columns of its last batch are in C. Store the edge tile's last batch element by "
          "element (or with a mask), or compute the tile into a local array and copy the "
          "columns that exist.";
  return note.str();
}

/// Compares C with the oracle, element by element. Each element of C is a float32 dot product of
/// length k, computed in any order, with or without FMA: its error is at most gamma_k times
/// sum_p |a_ip| |b_pj| (Higham, Accuracy and Stability of Numerical Algorithms, eq. 3.5), the bound
/// Tolerance::sum_of(k) gives with that per-element scale. With k = 0 the bound is 0: exact zeros.
/// The padding of C (columns n to ldc - 1) must still hold the poison GuardedBuffer put there.
///
/// A wrong C is then compared with the catalogue of mistakes (matmul_mistakes.hpp), and the first
/// it matches is named. `c_before`, a copy of C's buffer before the call when a test filled it with
/// values of its own, lets the catalogue recognise a C that was added to, or left as it was.
inline workbook::CheckResult check(const Product& want, const workbook::GuardedBuffer<float>& c,
                                   const MatmulShape& s, std::span<const float> c_before = {}) {
  workbook::CheckResult r = workbook::check_elementwise(
      c, [&](std::size_t i) { return want.value[i]; },
      {.where = where(),
       .tolerance = workbook::Tolerance::sum_of(s.k),
       .shape = {.rows = s.m, .cols = s.n, .ld = s.ldc},
       .scale = [&](std::size_t i) { return want.scale[i]; },
       .mistakes =
           [&] {
             return mistakes::catalogue({.a = want.a,
                                         .b = want.b,
                                         .shape = s,
                                         .want = want.value,
                                         .want_scale = want.scale,
                                         .c_before = c_before,
                                         .got = [&](std::size_t i) -> double {
                                           const float v = c[i / s.n * s.ldc + i % s.n];
                                           return workbook::Poison<float>::is_value(v)
                                                      ? mistakes::detail::kNaN
                                                      : v;
                                         }});
           }});
  if (!r.ok && r.wrong > 0) r.diagnosis += matmul_note(want, c, s);
  if (!r.ok && r.wrong == 0) r.diagnosis += edge_tile_note(c, s);
  return r;
}

/// C's buffer for a shape: exactly the elements it occupies, poisoned, between canaries.
inline workbook::GuardedBuffer<float> output_for(const MatmulShape& s, std::size_t misalign = 0) {
  return workbook::GuardedBuffer<float>(elements(s.m, s.n, s.ldc), misalign);
}

/// What fill_stale puts in C: small, so that a kernel that adds to it (C += A * B) accumulates no
/// more rounding error than a correct one does and is named exactly by the catalogue, yet far
/// outside the tolerance.
inline constexpr float kStale = 3.0f;

/// Fills the elements of C (not its padding) with kStale: stale contents from an earlier use of
/// the buffer, which matmul must overwrite. A kernel that adds to them is off by 3 everywhere; with
/// a copy of C from before the call, check() names that mistake.
inline void fill_stale(workbook::GuardedBuffer<float>& c, const MatmulShape& s) {
  for (std::size_t i = 0; i < s.m; ++i) std::fill_n(c.data() + i * s.ldc, s.n, kStale);
}

}  // namespace lab02::oracle
