#pragma once
// What a wrong matmul actually reads, found by running it on two probes of the failing shape:
// one operand the identity, the other holding 1 + its own index in every element of its buffer
// (padding too). Multiplying by the identity copies: C[i][j] must be A[i][j] (B the identity) or
// B[i][j] (A the identity), and because every value is a distinct small integer, exact in float,
// each wrong element of C says which element of A or B the code took instead. A formula fitted to
// those indices (C[i][j] took b's element i + j * k) names a transposed read, a wrong row stride or
// a shift, whatever loop structure or blocking produced it.
#include "matmul.hpp"

#include <workbook/buffer.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace lab02::probe {

/// What one element of C held after a probe.
struct Read {
  enum Kind { right, element, zero, unwritten, other } kind = right;
  std::size_t index = 0;  ///< for `element`: the index in the coded operand's buffer it copied
};

/// index = rows * i + cols * j + shift: how the code indexed the coded operand (i, j: C's row and
/// column), fitted exactly on every wrong element.
struct Formula {
  std::int64_t rows = 0, cols = 0, shift = 0;
  /// Whether the wrong elements span several rows (columns): else `rows` (`cols`) is unknown, 0.
  bool rows_known = false, cols_known = false;
};

/// Fits a Formula through every element read wrong, or nothing when they do not lie on one.
inline std::optional<Formula> fit(const std::vector<Read>& reads, std::size_t n) {
  struct Point {
    std::int64_t i, j, f;
  };
  std::vector<Point> points;
  for (std::size_t e = 0; e < reads.size(); ++e) {
    if (reads[e].kind == Read::right) continue;
    if (reads[e].kind != Read::element) return std::nullopt;
    points.push_back({static_cast<std::int64_t>(e / n), static_cast<std::int64_t>(e % n),
                      static_cast<std::int64_t>(reads[e].index)});
  }
  if (points.size() < 3) return std::nullopt;
  const Point& p0 = points[0];
  Formula f;
  // Along a row first (cols), then across rows (rows), then check every point.
  for (const Point& q : points)
    if (q.i == p0.i && q.j != p0.j) {
      if ((q.f - p0.f) % (q.j - p0.j) != 0) return std::nullopt;
      f.cols = (q.f - p0.f) / (q.j - p0.j);
      f.cols_known = true;
      break;
    }
  for (const Point& q : points)
    if (q.i != p0.i) {
      const std::int64_t rest = q.f - p0.f - f.cols * (q.j - p0.j);
      if (rest % (q.i - p0.i) != 0) return std::nullopt;
      f.rows = rest / (q.i - p0.i);
      f.rows_known = true;
      break;
    }
  f.shift = p0.f - f.rows * p0.i - f.cols * p0.j;
  for (const Point& q : points)
    if (f.rows * q.i + f.cols * q.j + f.shift != q.f) return std::nullopt;
  return f;
}

/// "lda" for a coefficient equal to the shape's lda, or its value: the names that can explain it.
inline std::string named(std::int64_t value, const MatmulShape& s, const char* first) {
  const std::array<std::pair<const char*, std::size_t>, 6> names = {
      {{"k", s.k}, {"n", s.n}, {"m", s.m}, {"lda", s.lda}, {"ldb", s.ldb}, {"ldc", s.ldc}}};
  std::string name;
  for (const auto& [label, v] : names)  // the expected name first, where it fits
    if (std::string(label) == first && static_cast<std::int64_t>(v) == value) name = label;
  for (const auto& [label, v] : names)
    if (name.empty() && static_cast<std::int64_t>(v) == value) name = label;
  return name.empty() ? std::to_string(value) : name;
}

/// "i * n + j + 3": a formula in C's row i and column j, with the shape's names.
inline std::string formula(const Formula& f, const MatmulShape& s, const char* ld) {
  std::ostringstream out;
  auto term = [&](std::int64_t coefficient, const char* index) {
    if (coefficient == 0) return;
    if (out.tellp() > 0)
      out << (coefficient < 0 ? " - " : " + ");
    else if (coefficient < 0)
      out << "-";
    const std::int64_t magnitude = coefficient < 0 ? -coefficient : coefficient;
    out << index;
    if (magnitude != 1) out << " * " << named(magnitude, s, ld);
  };
  term(f.rows, "i");
  term(f.cols, "j");
  if (f.shift != 0 || out.tellp() == 0) {
    if (out.tellp() > 0) out << (f.shift < 0 ? " - " : " + ");
    out << named(f.shift < 0 ? -f.shift : f.shift, s, "");
  }
  return out.str();
}

/// Runs matmul with `coded` as A (of_a) or as B, the other operand the identity, and reads C.
inline std::vector<Read> run(const MatmulShape& s, bool of_a) {
  const std::size_t rows = of_a ? s.m : s.k, cols = of_a ? s.k : s.n, ld = of_a ? s.lda : s.ldb;
  const std::size_t size = rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
  // The identity: k x n with ones on its diagonal (B), or m x k (A); zero elsewhere, padding too.
  const std::size_t id_rows = of_a ? s.k : s.m, id_cols = of_a ? s.n : s.k;
  const std::size_t id_ld = of_a ? s.ldb : s.lda;
  const std::size_t id_size = id_rows == 0 || id_cols == 0 ? 0 : (id_rows - 1) * id_ld + id_cols;
  // Each operand is followed by as much again of NaN: a code that reads past the end (it passed
  // the same shape without crashing) reads NaN here too, rather than crash on another heap layout.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> coded(2 * size + 1024, nan), identity(2 * id_size + 1024, nan);
  for (std::size_t f = 0; f < size; ++f) coded[f] = static_cast<float>(f + 1);
  std::fill_n(identity.begin(), id_size, 0.0f);
  for (std::size_t d = 0; d < id_rows && d < id_cols; ++d) identity[d * id_ld + d] = 1.0f;
  workbook::GuardedBuffer<float> c(s.m == 0 || s.n == 0 ? 0 : (s.m - 1) * s.ldc + s.n);
  const std::span<const float> coded_span(coded.data(), size), id_span(identity.data(), id_size);
  if (of_a)
    lab02::matmul(coded_span, id_span, c.span(), s);
  else
    lab02::matmul(id_span, coded_span, c.span(), s);
  std::vector<Read> reads(s.m * s.n);
  for (std::size_t i = 0; i < s.m; ++i)
    for (std::size_t j = 0; j < s.n; ++j) {
      const float got = c[i * s.ldc + j];
      // B the identity: C[i][j] = A[i][j] for j < k, else 0. A the identity: B[i][j] for i < k.
      const bool inside = of_a ? j < s.k : i < s.k;
      const float want = inside ? coded[i * ld + j] : 0.0f;
      Read& r = reads[i * s.n + j];
      if (got == want && !c.is_poison(i * s.ldc + j))
        r.kind = Read::right;
      else if (c.is_poison(i * s.ldc + j) || std::isnan(got))
        r.kind = Read::unwritten;
      else if (got == 0.0f)
        r.kind = Read::zero;
      else if (got >= 1.0f && got <= static_cast<float>(size) && got == std::floor(got))
        r = {Read::element, static_cast<std::size_t>(got) - 1};
      else
        r.kind = Read::other;
    }
  return reads;
}

/// One probe's finding: "" when C came out as it must.
inline std::string describe(const std::vector<Read>& reads, const MatmulShape& s, bool of_a) {
  std::size_t counts[5] = {};
  std::size_t first = reads.size();
  for (std::size_t e = 0; e < reads.size(); ++e) {
    ++counts[reads[e].kind];
    if (reads[e].kind != Read::right && first == reads.size()) first = e;
  }
  if (first == reads.size()) return "";
  const char* name = of_a ? "A" : "B";
  const char* buffer = of_a ? "a" : "b";
  const char* ld = of_a ? "lda" : "ldb";
  const std::size_t ld_value = of_a ? s.lda : s.ldb;
  std::ostringstream out;
  out << "with " << (of_a ? "B" : "A") << " the identity, C must copy " << name
      << " (C[i][j] = " << name << "[i][j], element i * " << ld << " + j of " << buffer << "); ";
  const std::size_t wrong = reads.size() - counts[Read::right];
  if (const auto f = fit(reads, s.n)) {
    out << wrong << " of " << reads.size() << " elements of C took element " << formula(*f, s, ld)
        << " of " << buffer << " instead";
    // What the strides say, where the wrong elements span rows and columns to show them.
    const bool both_known = f->rows_known && f->cols_known;
    const bool swapped = both_known && f->rows == 1 && f->cols != 1;
    if (swapped)
      out << ": " << name << " is read down its columns, as if stored transposed ("
          << (of_a ? "k x m" : "n x k") << ", rows " << named(f->cols, s, ld) << " apart)";
    else if (both_known && f->cols == 1 && f->rows != static_cast<std::int64_t>(ld_value))
      out << ": the rows of " << name << " are taken " << named(f->rows, s, ld)
          << " apart, where they lie " << ld << " = " << ld_value << " apart";
    else if (both_known && f->cols == 1 && f->shift != 0)
      out << ": every read of " << name << " is shifted by " << f->shift << " elements";
  } else {
    const Read& r = reads[first];
    out << wrong << " of " << reads.size() << " elements of C are wrong";
    if (counts[Read::element] > 0)
      out << ", " << counts[Read::element] << " of them a single wrong element of " << name;
    if (counts[Read::zero] > 0) out << ", " << counts[Read::zero] << " zero";
    if (counts[Read::unwritten] > 0)
      out << ", " << counts[Read::unwritten] << " never written (or NaN)";
    if (counts[Read::other] > 0) out << ", " << counts[Read::other] << " a mix of several elements";
    out << "; the first, C[" << first / s.n << "][" << first % s.n << "]";
    if (r.kind == Read::element)
      out << ", took " << name << "[" << r.index / ld_value << "][" << r.index % ld_value
          << "] (element " << r.index << ")";
    else if (r.kind == Read::zero)
      out << ", was 0";
    else if (r.kind == Read::unwritten)
      out << ", was never written (or NaN)";
    else
      out << ", held a mix of several elements";
  }
  return out.str();
}

/// The two probes of shape `s`: what the code's C shows of how it reads A and B; "" when both
/// copies came out right (the mistake lies elsewhere: in the sums, not in the indexing) or the
/// shape's operands are too large to code exactly in float.
inline std::string what_matmul_reads(const MatmulShape& s) {
  constexpr std::size_t kExact = std::size_t{1} << 24;  // integers exact in float
  if (s.m * s.lda >= kExact || s.k * s.ldb >= kExact || s.k == 0 || s.m == 0 || s.n == 0) return "";
  const std::vector<Read> of_a = run(s, true), of_b = run(s, false);
  const std::string a = describe(of_a, s, true), b = describe(of_b, s, false);
  // Only a formula tells more than the check's own reading of random inputs. Where both probes
  // come out wrong, a wrong read of either operand spoils both (the identity is read the same
  // wrong way): one is named only when its formula moves with both i and j and the other probe
  // follows none.
  const auto a_fit = fit(of_a, s.n), b_fit = fit(of_b, s.n);
  auto moves = [](const std::optional<Formula>& f) {
    return f && f->rows_known && f->cols_known && f->rows != 0 && f->cols != 0;
  };
  const std::string lead = "Two probes of this shape show how your code indexes A and B: ";
  if (!a.empty() && b.empty() && a_fit)
    return lead + a + "; with A the identity, C copied B right.";
  if (a.empty() && !b.empty() && b_fit)
    return lead + "with B the identity, C copied A right; " + b + ".";
  if (!a.empty() && !b.empty() && moves(b_fit) && !a_fit)
    return lead + b + " (with B the identity, C is wrong too, as a wrong read of B also makes it).";
  if (!a.empty() && !b.empty() && moves(a_fit) && !b_fit)
    return lead + a + " (with A the identity, C is wrong too, as a wrong read of A also makes it).";
  return "";
}

}  // namespace lab02::probe
