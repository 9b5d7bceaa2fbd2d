#include <workbook/check.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace workbook {
namespace {

// Bytes in one SIMD register of this build, to name the batch width in diagnoses ("4 full batches
// of 16 + 3 left over"). The same as xsimd's default architecture, without including all of xsimd.
#if defined(__AVX512F__)
constexpr std::size_t kSimdBytes = 64;
#elif defined(__AVX__)
constexpr std::size_t kSimdBytes = 32;
#else
constexpr std::size_t kSimdBytes = 16;
#endif
template <class T>
constexpr std::size_t kLanes = kSimdBytes / sizeof(T);

std::string fmt(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  char text[32];
  std::snprintf(text, sizeof text, "%.8g", v);
  return text;
}

std::string count(std::size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// How a tail looks for a width of `lanes`: "n = 67 = 4 full batches of 16 + 3 left over".
std::string batches_of(std::size_t n, std::size_t lanes) {
  return "n = " + std::to_string(n) + " = " + std::to_string(n / lanes) + " full batches of " +
         std::to_string(lanes) + " + " + std::to_string(n % lanes) + " left over";
}

// Neumaier's compensated sum: the oracle's own rounding error stays far below float32 tolerances.
class AccurateSum {
 public:
  void add(double x) {
    const double t = sum_ + x;
    compensation_ += std::fabs(sum_) >= std::fabs(x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
  }
  // With an infinite or NaN term the compensation is meaningless (inf - inf): the plain sum is
  // right.
  double value() const { return std::isfinite(sum_) ? sum_ + compensation_ : sum_; }

 private:
  double sum_ = 0, compensation_ = 0;
};

template <class T>
double as_double(T v) {
  return static_cast<double>(v);
}

template <class T>
constexpr bool is_float_output = std::is_floating_point_v<T>;

// Does `got` match `want` within the tolerance? `unwritten` outputs never match.
template <class T>
bool matches(double got, bool unwritten, double want, double scale, const Tolerance& tol) {
  if (unwritten) return false;
  if (std::isnan(want)) return std::isnan(got);
  // The answer as the output type can hold it: an exact result beyond FLT_MAX rounds to infinity.
  const double representable =
      is_float_output<T> ? static_cast<double>(static_cast<T>(want)) : want;
  if (std::isinf(representable)) return got == representable;
  if (!std::isfinite(got)) return false;
  if (tol.rel == 0 && tol.abs == 0) return got == representable;  // +0 == -0: zero's sign is free
  return std::fabs(got - want) <= tol.rel * scale + tol.abs;
}

// The spacing of float32 values at |v|: the distance to the next float up.
double ulp_of(double v) {
  const float a = std::fabs(static_cast<float>(v));
  const float next = std::bit_cast<float>(std::bit_cast<std::uint32_t>(a) + 1);
  return static_cast<double>(next) - static_cast<double>(a);
}

// All the facts the diagnoses need about one compared output.
struct Outcome {
  std::size_t n = 0, rows = 1, cols = 0;
  std::vector<std::uint8_t> bad, unwritten;
  std::size_t bad_count = 0, unwritten_count = 0;
  std::function<double(std::size_t)> got, want;
  std::function<double(std::size_t)> scale;  // the check's (ElementwiseCheck::scale), or empty

  bool all_bad_unwritten() const {
    for (std::size_t i = 0; i < n; ++i)
      if (bad[i] && !unwritten[i]) return false;
    return true;
  }
  // Is the set of bad elements exactly [first, last)?
  bool bad_exactly(std::size_t first, std::size_t last) const {
    if (last - first != bad_count) return false;
    for (std::size_t i = first; i < last; ++i)
      if (!bad[i]) return false;
    return true;
  }
  std::size_t first_bad() const {
    for (std::size_t i = 0; i < n; ++i)
      if (bad[i]) return i;
    return n;
  }
};

// How far a factor or an offset shared by every element may be off in each, relative: four times
// the tolerance's, and at most 1% (a tolerance that accepts a whole step, as quantize's does near
// a tie, would otherwise let any ratio pass for "the same factor").
double factor_slack(const Tolerance& tol) {
  return std::min(std::max(4 * tol.rel, 16 * kFloatUnitRoundoff), 1e-2);
}

// Every bad element within tolerance of one constant difference (or ratio)? Returns it via `value`.
bool constant_pattern(const Outcome& o, bool ratio, const Tolerance& tol, double& value) {
  if (o.n < 2 || o.bad_count < std::max<std::size_t>(2, o.n * 9 / 10)) return false;
  std::vector<double> d;
  for (std::size_t i = 0; i < o.n; ++i) {
    const double g = o.got(i), w = o.want(i);
    if (!std::isfinite(g) || !std::isfinite(w)) return false;
    if (ratio) {
      if (w == 0) continue;
      d.push_back(g / w);
    } else {
      d.push_back(g - w);
    }
  }
  if (d.size() < 2) return false;
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  value = d[d.size() / 2];
  if (value == (ratio ? 1.0 : 0.0)) return false;
  const double slack = factor_slack(tol);
  for (std::size_t i = 0; i < o.n; ++i) {
    const double g = o.got(i), w = o.want(i);
    if (ratio) {
      if (w != 0 && std::fabs(g / w - value) > slack * std::fabs(value)) return false;
    } else if (std::fabs((g - w) - value) > slack * (std::fabs(w) + std::fabs(value)) + tol.abs) {
      return false;
    }
  }
  return true;
}

// Most elements (three quarters at least) scaled by one factor, each within the rounding of its
// own scale (a matrix product's element that cancels to near 0 has a ratio far from the factor):
// with some not, one path of the kernel (its full tiles, say) applies the factor and another (a
// narrow last tile) does not. Gives the factor, how many elements it scales, and, in a 2-D output
// where the others are the last columns of every row, how many those columns are (else 0).
bool mostly_scaled(const Outcome& o, const Tolerance& tol, double& value, std::size_t& scaled,
                   std::size_t& last_columns) {
  if (o.n < 16 || o.bad_count < o.n / 2) return false;
  std::vector<double> ratios;
  for (std::size_t i = 0; i < o.n; ++i) {
    const double g = o.got(i), w = o.want(i);
    if (std::isfinite(g) && std::isfinite(w) && w != 0) ratios.push_back(g / w);
  }
  if (ratios.size() < o.n / 2) return false;
  std::nth_element(ratios.begin(), ratios.begin() + ratios.size() / 2, ratios.end());
  value = ratios[ratios.size() / 2];
  if (std::fabs(value - std::round(value)) < 1e-3) value = std::round(value);  // 2, not 1.9999998
  if (value == 1 || value == 0 || !std::isfinite(value)) return false;
  const double slack = factor_slack(tol);
  std::vector<std::uint8_t> fits(o.n, 0);
  scaled = 0;
  for (std::size_t i = 0; i < o.n; ++i) {
    const double g = o.got(i), w = o.want(i);
    const double scale = std::fabs(value) * std::max(o.scale ? o.scale(i) : 0.0, std::fabs(w));
    fits[i] = std::isfinite(g) && w != 0 && std::fabs(g - value * w) <= slack * scale + tol.abs;
    scaled += fits[i];
  }
  if (scaled * 4 < o.n * 3) return false;
  last_columns = 0;
  if (o.rows > 1) {
    std::size_t first_other = o.cols;  // the first column holding an element the factor misses
    for (std::size_t i = 0; i < o.n; ++i)
      if (!fits[i] && o.bad[i]) first_other = std::min(first_other, i % o.cols);
    bool suffix = first_other < o.cols;
    for (std::size_t i = 0; i < o.n && suffix; ++i)
      suffix = (i % o.cols < first_other) == bool(fits[i]) || !o.bad[i];
    if (suffix) last_columns = o.cols - first_other;
  }
  return true;
}

// Does every wrong element hold exactly twice its answer (the same value added in twice)?
bool bad_ones_doubled(const Outcome& o, const Tolerance& tol) {
  const double slack = factor_slack(tol);
  std::size_t doubled = 0;
  for (std::size_t i = 0; i < o.n; ++i) {
    if (!o.bad[i]) continue;
    const double g = o.got(i), w = o.want(i);
    // Twice a sum rounds with twice its terms (the check's scale), not with |2w|: where the terms
    // cancel, |2w| is far smaller than that error.
    const double scale = 2 * std::max(o.scale ? o.scale(i) : 0.0, std::fabs(w));
    if (!std::isfinite(g) || w == 0 || !(std::fabs(g - 2 * w) <= slack * scale + tol.abs))
      return false;
    ++doubled;
  }
  return doubled > 0;
}

// got[i] == want[i + shift] for every i where both exist?
bool shifted_by(const Outcome& o, long shift) {
  if (o.n < 4) return false;
  std::size_t compared = 0;
  for (std::size_t i = 0; i < o.n; ++i) {
    const long j = static_cast<long>(i) + shift;
    if (j < 0 || j >= static_cast<long>(o.n)) continue;
    const double g = o.got(i), w = o.want(static_cast<std::size_t>(j));
    if (!(g == w || (std::isnan(g) && std::isnan(w)))) return false;
    ++compared;
  }
  return compared >= o.n - 1;
}

// Is got within the tolerance of the answer at index `answer` (a hypothesis that element i holds
// another's answer)? Twice the check's bound, at the scale of that answer (|w|, or a sum's terms);
// written so that a NaN, which compares false with everything, is no match.
bool holds_answer(const Outcome& o, const Tolerance& tol, double got, std::size_t answer) {
  const double w = o.want(answer), scale = o.scale ? o.scale(answer) : std::fabs(w);
  return std::fabs(got - w) <= 2 * std::max(tol.rel, 1e-5) * (scale + 1e-30) + tol.abs;
}

// got laid out as the transpose of want (C[i][j] holds C[j][i], or column-major storage)?
bool transposed(const Outcome& o, const Tolerance& tol) {
  if (o.rows < 2 || o.cols < 2) return false;
  for (std::size_t r = 0; r < o.rows; ++r)
    for (std::size_t c = 0; c < o.cols; ++c) {
      if (!holds_answer(o, tol, o.got(c * o.rows + r), r * o.cols + c)) return false;
    }
  return true;
}

// Is the output what a tiled kernel gives when it reads its tile buffer with the wrong row stride?
// The kernel sums each tile of `rows` x `width` elements in a local buffer whose rows are `width`
// apart, then copies the tile out; the partial tile at the right edge (the last `cols` columns,
// fewer than `width`) is read at i * cols + j instead of i * width + j, so its rows after the
// first hold other elements of the tile, or the buffer's zero padding. The full tiles are right.
// Tried for every tile height and width up to 16 x 64 (or twice N): exact, so it names nothing
// else, and cheap, as a wrong guess fails within the first rows. `width_known`: no wider buffer
// gives the same output.
bool tile_buffer_misread(const Outcome& o, const Tolerance& tol, std::size_t& tile_rows,
                         std::size_t& width, bool& width_known, std::size_t& cols) {
  if (o.rows < 2 || o.cols < 2 || o.bad_count == 0 || o.n != o.rows * o.cols) return false;
  const auto matches = [&](std::size_t i, std::size_t answer) {
    return holds_answer(o, tol, o.got(i), answer);
  };
  // Does the misread with tiles of tr rows and w columns give the output? `moved`: some wrong
  // element holds another element's nonzero answer (zeros alone are also what rows never written
  // give, and fit many widths).
  const auto fits = [&](std::size_t tr, std::size_t w, bool& moved) {
    const std::size_t j0 = o.cols / w * w, edge = o.cols - j0;  // the partial tile's columns
    if (edge == 0) return false;
    moved = false;
    for (std::size_t r = 0; r < o.rows; ++r) {
      const std::size_t r0 = r / tr * tr, height = std::min(tr, o.rows - r0);
      for (std::size_t c = 0; c < o.cols; ++c) {
        const std::size_t i = r * o.cols + c;
        if (c < j0) {
          if (!matches(i, i)) return false;
          continue;
        }
        const std::size_t at = (r - r0) * edge + (c - j0);  // where the copy reads
        const std::size_t br = at / w, bc = at % w;
        if (br < height && bc < edge) {
          const std::size_t from = (r0 + br) * o.cols + j0 + bc;
          if (!matches(i, from)) return false;
          moved |= from != i && o.got(i) != 0;
        } else if (o.got(i) != 0) {
          return false;  // the buffer's zero padding
        }
      }
    }
    return moved;
  };
  const std::size_t widest = std::max<std::size_t>(64, 2 * o.cols);
  for (std::size_t tr = 2; tr <= std::min<std::size_t>(o.rows, 16); ++tr) {
    for (std::size_t w = 2; w <= widest; ++w) {
      bool moved = false;
      if (!fits(tr, w, moved)) continue;
      tile_rows = tr;
      width = w;
      cols = o.cols - o.cols / w * w;
      width_known = true;  // unless a wider buffer fits as well
      for (std::size_t other = w + 1; other <= widest && width_known; ++other)
        width_known = !fits(tr, other, moved);
      return true;
    }
  }
  return false;
}

// Bad elements exactly the last kr rows and the last kc columns of an rows x cols output?
bool bad_in_tails(const Outcome& o, std::size_t& kr, std::size_t& kc) {
  kr = kc = 0;
  auto row_all_bad = [&](std::size_t r) {
    for (std::size_t c = 0; c < o.cols; ++c)
      if (!o.bad[r * o.cols + c]) return false;
    return true;
  };
  auto col_all_bad = [&](std::size_t c) {
    for (std::size_t r = 0; r < o.rows; ++r)
      if (!o.bad[r * o.cols + c]) return false;
    return true;
  };
  while (kr < o.rows && row_all_bad(o.rows - 1 - kr)) ++kr;
  while (kc < o.cols && col_all_bad(o.cols - 1 - kc)) ++kc;
  if (kr == o.rows || kc == o.cols || (kr == 0 && kc == 0)) return false;
  return kr * o.cols + kc * o.rows - kr * kc == o.bad_count;
}

// Is row 0 right, and are the wrong elements the first `width` columns of every later row (all
// of them when width == cols)? That is what writes past the end of each row leave where rows lie
// cols apart: each row's overrun lands at the start of the next. A few elements of that region may
// come out right by chance (a term of 0 added, read past the end of an input), so a third of it
// must be wrong, in 9 of 10 later rows, and nothing else.
bool later_rows_start_wrong(const Outcome& o, std::size_t& width) {
  if (o.rows < 2 || o.cols == 0 || o.bad_count == 0) return false;
  width = 0;
  for (std::size_t r = 0; r < o.rows; ++r)
    for (std::size_t c = 0; c < o.cols; ++c)
      if (o.bad[r * o.cols + c]) {
        if (r == 0) return false;
        width = std::max(width, c + 1);
      }
  std::size_t rows_hit = 0;
  for (std::size_t r = 1; r < o.rows; ++r)
    rows_hit += std::any_of(&o.bad[r * o.cols], &o.bad[r * o.cols] + width,
                            [](std::uint8_t b) { return b != 0; });
  return 10 * rows_hit >= 9 * (o.rows - 1) && 3 * o.bad_count >= (o.rows - 1) * width;
}

// Right answers in the wrong places: for a sample of the wrong elements of a matrix, where in the
// right answer each one's value comes from, and the one displacement that explains (nearly) all of
// them: a column offset (a block's start added twice or left out), a row offset, or rows stored
// with another stride than N (the shift grows by the same number of columns from row to row, from
// the first row or from the first of every block of rows: a tile stored with its own width as ld).
// "" when no single one fits. Up to 256 Ki elements: each sample is searched for in the whole
// answer.
std::string moved_answers(const Outcome& o, const Tolerance& tol) {
  if (o.rows < 2 || o.cols < 2 || o.n > (std::size_t{1} << 18) || o.bad_count < 8) return "";
  std::vector<std::size_t> wrong;
  for (std::size_t i = 0; i < o.n; ++i)
    if (o.bad[i] && !o.unwritten[i] && o.got(i) != 0) wrong.push_back(i);
  if (wrong.size() < 8 || wrong.size() * 4 < o.bad_count) return "";
  struct Seen {
    long r, c;                                // the wrong element
    std::vector<std::pair<long, long>> from;  // where its value is the right answer
  };
  std::vector<Seen> seen;
  const std::size_t samples = std::min<std::size_t>(48, wrong.size());
  std::size_t found = 0;
  for (std::size_t k = 0; k < samples; ++k) {
    const std::size_t p = wrong[k * wrong.size() / samples];
    Seen s{static_cast<long>(p / o.cols), static_cast<long>(p % o.cols), {}};
    const double g = o.got(p);
    for (std::size_t q = 0; q < o.n && s.from.size() <= 3; ++q)
      if (q != p && holds_answer(o, tol, g, q))
        s.from.push_back({static_cast<long>(q / o.cols), static_cast<long>(q % o.cols)});
    if (s.from.empty() || s.from.size() > 3) continue;  // nowhere, or a value found all over
    ++found;
    seen.push_back(std::move(s));
  }
  if (seen.size() < 8 || found * 4 < samples * 3) return "";
  // A hypothesis holds when every located sample fits it through one of its sources.
  const auto holds = [&](auto fits) {
    return std::all_of(seen.begin(), seen.end(), [&](const Seen& s) {
      return std::any_of(s.from.begin(), s.from.end(), [&](const std::pair<long, long>& f) {
        return fits(s, f.first, f.second);
      });
    });
  };
  const std::string looked = " (" + std::to_string(seen.size()) + " of " + std::to_string(samples) +
                             " wrong elements looked at" +
                             (o.unwritten_count > 0 ? "; the " + count(o.unwritten_count, "other") +
                                                          " still hold the poison: never written"
                                                    : std::string()) +
                             ")";
  for (const auto& [fr, fc] : seen.front().from) {
    const long dc = fc - seen.front().c, dr = fr - seen.front().r;
    if (dr == 0 && dc != 0 &&
        holds([&](const Seen& s, long r, long c) { return r == s.r && c - s.c == dc; }))
      return "the wrong elements hold right answers from the same row, " +
             std::to_string(std::labs(dc)) + (dc > 0 ? " columns further on" : " columns back") +
             ": C[i][j] holds the answer for C[i][j " + (dc > 0 ? "+ " : "- ") +
             std::to_string(std::labs(dc)) + "]" + looked +
             ". A column offset: check the column where each block (or tile) of columns starts, in "
             "every matrix it reads or writes (its start added twice, or left out).";
    if (dc == 0 && dr != 0 &&
        holds([&](const Seen& s, long r, long c) { return c == s.c && r - s.r == dr; }))
      return "the wrong elements hold right answers from the same column, " +
             std::to_string(std::labs(dr)) + (dr > 0 ? " rows further down" : " rows up") +
             ": C[i][j] holds the answer for C[i " + (dr > 0 ? "+ " : "- ") +
             std::to_string(std::labs(dr)) + "][j]" + looked +
             ". A row offset: check the row where each block (or tile) of rows starts, in every "
             "matrix it reads or writes.";
  }
  // The shift grows row by row: C[r][c] holds the answer t * s elements further on, t the row of
  // that answer within its block of h rows (h = 0: the whole matrix). Rows laid out N - s apart
  // where N is meant (a row shifted past its end spills into the row before).
  const auto n_cols = static_cast<long>(o.cols);
  for (long h = 0; h <= 16; h = h == 0 ? 2 : h + 1) {
    long step = 0;
    const bool fits = holds([&](const Seen& s, long r, long c) {
      const long t = h == 0 ? r : r % h, shift = (r * n_cols + c) - (s.r * n_cols + s.c);
      if (t == 0 || shift % t != 0) return false;
      if (step == 0) step = shift / t;
      return step != 0 && shift == t * step;
    });
    if (!fits || step == 0 || step >= n_cols) continue;
    const long ld = n_cols - step;
    return "row t of " +
           (h == 0 ? std::string("C") : "each block of " + std::to_string(h) + " rows") +
           " holds right answers from t * " + std::to_string(std::labs(step)) +
           " elements further on" + looked + ": its rows were stored " + std::to_string(ld) +
           " elements apart, where C's rows lie N = " + std::to_string(o.cols) +
           " apart. The leading dimension used for them is " + std::to_string(ld) +
           " (a tile's or buffer's own width, or a block's size) instead of C's ld: store row t "
           "at C + t * ldc.";
  }
  return "";
}

// The first `right` rows (two or more) without a wrong element, and at least half of each row from
// there on wrong, two rows or more: the first block of rows is right, every later one is not.
bool later_blocks_of_rows_wrong(const Outcome& o, std::size_t& right) {
  if (o.rows < 4 || o.cols == 0) return false;
  right = o.first_bad() / o.cols;
  if (right < 2 || o.rows - right < 2) return false;
  for (std::size_t r = right; r < o.rows; ++r) {
    const auto row = o.bad.begin() + static_cast<std::ptrdiff_t>(r * o.cols);
    if (2 * static_cast<std::size_t>(
                std::count(row, row + static_cast<std::ptrdiff_t>(o.cols), 1)) <
        o.cols)
      return false;
  }
  return true;
}

// Are the bad elements exactly one lane r of every `lanes`-wide batch (indices r, r + lanes, ...)?
bool one_lane(const Outcome& o, std::size_t lanes, std::size_t& lane) {
  if (o.bad_count < 2 || o.n < 2 * lanes) return false;
  lane = o.first_bad() % lanes;
  for (std::size_t i = 0; i < o.n; ++i)
    if (static_cast<bool>(o.bad[i]) != (i % lanes == lane)) return false;
  return true;
}

// Do the last `tail` elements hold the answers for elements 0 to tail - 1 (a tail loop that reads
// from index 0 again)?
bool tail_restarts_at_zero(const Outcome& o, std::size_t tail, const Tolerance& tol) {
  for (std::size_t j = 0; j < tail; ++j) {
    const double g = o.got(o.n - tail + j), w = o.want(j);
    if (o.unwritten[o.n - tail + j]) return false;
    if (std::isnan(g) || std::isnan(w)) {
      if (std::isnan(g) != std::isnan(w)) return false;
      continue;
    }
    const double scale = o.scale ? o.scale(j) : std::fabs(w);
    if (std::fabs(g - w) > 2 * (tol.rel * scale + tol.abs)) return false;
  }
  return true;
}

// The smallest period p (a power of two from 2 to n / 2) with bad[i] == bad[i % p] for every i:
// the same positions of every group of p elements are wrong. 0 if there is none.
std::size_t bad_period(const Outcome& o) {
  for (std::size_t p = 2; p <= o.n / 2; p *= 2) {
    bool periodic = true;
    for (std::size_t i = p; i < o.n && periodic; ++i) periodic = o.bad[i] == o.bad[i % p];
    if (periodic) return p;
  }
  return 0;
}

// "the last 2 rows", "the last 3 columns of every row", "the last 2 rows and the last 3 columns".
std::string last_rows_and_columns(std::size_t rows, std::size_t columns) {
  if (columns == 0) return "the last " + count(rows, "row");
  if (rows == 0) return "the last " + count(columns, "column") + " of every row";
  return "the last " + count(rows, "row") + " and the last " + count(columns, "column");
}

// Elements never written, in the kernel's own terms.
std::string diagnose_unwritten(const Outcome& o, Model model, std::size_t lanes,
                               Specificity& level) {
  const std::size_t n = o.n, k = o.bad_count;
  std::size_t kr = 0, kc = 0;
  if (o.rows > 1 && bad_in_tails(o, kr, kc)) {
    const std::string which =
        last_rows_and_columns(kr, kc) + (kr + kc == 1 ? " was" : " were") + " never written";
    if (model == Model::cuda)
      return which + ": your grid stops short of M = " + std::to_string(o.rows) +
             " rows or N = " + std::to_string(o.cols) +
             " columns. rows / blockDim.y (or cols / blockDim.x) rounds down: launch (rows + "
             "blockDim.y - 1) / blockDim.y blocks, and keep the bounds check in the kernel.";
    return which + ": your blocked loops skip the remainder when M = " + std::to_string(o.rows) +
           " or N = " + std::to_string(o.cols) +
           " is not a multiple of the block size. Add the tail iterations.";
  }
  if (o.bad_exactly(n - k, n)) {
    const std::string which =
        "the last " + count(k, "element") + (k == 1 ? " was" : " were") + " never written";
    if (model == Model::cuda)
      return which + ": the threads you launched cover only the first " + std::to_string(n - k) +
             " of n = " + std::to_string(n) +
             ". n / threads_per_block rounds down: launch (n + threads - 1) / threads blocks, or "
             "let each thread loop over the rest (a grid-stride loop, i += blockDim.x * "
             "gridDim.x), and keep `if (i < n)`.";
    if (model == Model::threads)
      return which + ": the split into chunks drops the remainder (n = " + std::to_string(n) +
             " is not a multiple of your chunk size, and the first " + std::to_string(n - k) +
             " were covered). Give the last chunk everything up to n.";
    if (n % lanes == 0 && k == lanes)
      return "the last SIMD batch (the last " + std::to_string(k) +
             " elements) was never written, and n = " + std::to_string(n) +
             " is a whole number of batches of " + std::to_string(lanes) +
             ": your SIMD loop stops one batch early (a bound like i + " + std::to_string(lanes) +
             " < n where i + " + std::to_string(lanes) + " <= n is meant).";
    return which + ": your tail loop is missing or stops early (" + batches_of(n, lanes) +
           "; with another width the count differs). After the SIMD loop, finish the remaining "
           "elements one at a time.";
  }
  if (o.bad_exactly(0, k)) {
    const std::string which =
        "the first " + count(k, "element") + (k == 1 ? " was" : " were") + " never written";
    if (model == Model::cuda)
      return which +
             ": no thread stores to them. Check the index, i = blockIdx.x * blockDim.x + "
             "threadIdx.x (not starting at block 1, no offset added twice).";
    if (model == Model::threads)
      return which +
             ": the first chunk is never run (or starts late). Check where your loop "
             "over chunks begins.";
    // A peel before the first aligned address leaves less than one batch; every whole batch
    // unwritten, the tail after them right, is the SIMD loop's own doing.
    if (model == Model::simd && k >= lanes && k == n / lanes * lanes && k < n)
      return which + " (every whole batch of " + std::to_string(lanes) + "; the last " +
             std::to_string(n - k) +
             ", done one by one, are right): they still hold the poison put there before the "
             "call. Your SIMD loop either stored nothing, or stored what it loaded from the "
             "output instead of the input, which is that poison: check what its batches load and "
             "where they store.";
    return which +
           ": check the loop that handles the start (the elements before the first "
           "aligned address, if you peel them off).";
  }
  const std::string which = count(k, "element") + " were never written (the first at index " +
                            std::to_string(o.first_bad()) + ")";
  const std::size_t period = bad_period(o);
  // Scattered unwritten elements say where to look only when they repeat with a period.
  if (period == 0) level = Specificity::observed;
  if (model == Model::cuda)
    return which +
           (period > 0
                ? ", the same positions in every group of " + std::to_string(period) + " elements"
                : std::string()) +
           ": some threads never store, or the step skips elements. A grid-stride loop steps by "
           "blockDim.x * gridDim.x, all the threads of the grid; each thread's first element is "
           "blockIdx.x * blockDim.x + threadIdx.x.";
  if (model == Model::threads)
    return which +
           ": some chunks are never run, or two tasks were given the same chunk. Check "
           "the start and end of each chunk you hand out.";
  return which + ": some iterations of your loop never store.";
}

// Elements left unwritten by one branch: those never written are exactly the elements (of the
// tail, when they all lie there) where an input has one sign, and the others are right. A tail that
// stops early leaves a suffix; a branch that stores nothing (or stores the output's own old value,
// y[i] where x[i] is meant) leaves every element that takes it, wherever it lies. "" when no input
// separates them so.
std::string unwritten_by_sign(const Outcome& o, const std::vector<Column>& inputs, Model model,
                              std::size_t lanes) {
  if (!o.all_bad_unwritten() || o.unwritten_count == 0 || o.unwritten_count == o.n) return "";
  const std::size_t first = o.first_bad(), left_over = o.n % lanes;
  const bool in_tail = model == Model::simd && left_over > 0 && first >= o.n - left_over;
  const std::size_t begin = in_tail ? o.n - left_over : 0;
  struct Sign {
    const char* text;
    bool nan_too;  // the comparison that selects these is false for NaN: !(x <= 0)
    bool (*holds)(double);
  };
  static constexpr Sign signs[] = {
      {"> 0", true, [](double x) { return !(x <= 0); }},
      {"< 0", true, [](double x) { return !(x >= 0); }},
      {">= 0", false, [](double x) { return x >= 0; }},
      {"<= 0", false, [](double x) { return x <= 0; }},
  };
  for (const Column& c : inputs) {
    for (const Sign& sign : signs) {
      bool separates = true, nan = false;
      // A written element before an unwritten one: no loop that stops early leaves this.
      bool interleaved = false, written_seen = false;
      for (std::size_t i = begin; i < o.n && separates; ++i) {
        const double x = c.at(i);
        nan |= std::isnan(x);
        separates = bool(o.unwritten[i]) == sign.holds(x);
        interleaved |= written_seen && o.unwritten[i];
        written_seen |= !o.unwritten[i];
      }
      if (!separates || !written_seen) continue;
      const std::string where_x =
          c.name + " " + sign.text + (nan && sign.nan_too ? " (or NaN)" : "");
      const std::string region = in_tail ? "of the tail (the last " + std::to_string(left_over) +
                                               ": " + batches_of(o.n, lanes) + ") "
                                         : "";
      const std::string branch =
          "a branch for " + where_x +
          " that stores nothing, or stores what the output already held (it reads the output's "
          "own element where " +
          c.name + "[i] is meant: right only in place, when the output is " + c.name + ")";
      if (interleaved)
        return "the " + count(o.unwritten_count, "element") + " never written are exactly those " +
               region + "where " + where_x + "; every other element is right. Your code has " +
               branch + ": check that branch" + (in_tail ? " in your tail loop." : ".");
      return "the last " + count(o.unwritten_count, "element") +
             " were never written, and they are exactly those " + region + "where " + where_x +
             ", the others being right: either your " +
             (in_tail ? "tail loop stops early" : "loop stops early") + ", or it has " + branch +
             ".";
    }
  }
  return "";
}

// --- A formula of the inputs that the wrong elements follow ------------------------------------

// A polynomial of degree 2 or less in one or two inputs: coefficients of 1, x, y, x^2, xy, y^2.
struct Quadratic {
  std::array<double, 6> c{};
  static std::array<double, 6> terms(double x, double y) { return {1, x, y, x * x, x * y, y * y}; }
  double at(double x, double y) const {
    const auto t = terms(x, y);
    double v = 0;
    for (std::size_t k = 0; k < 6; ++k) v += c[k] * t[k];
    return v;
  }
  // What the rounding of computing it in float allows: a few float epsilons of its terms' sizes.
  double slack(double x, double y) const {
    const auto t = terms(x, y);
    double size = 0;
    for (std::size_t k = 0; k < 6; ++k) size += std::fabs(c[k] * t[k]);
    return 1e-5 * size + 1e-30;
  }
  bool operator==(const Quadratic& other) const { return c == other.c; }
  // "a*a - b*b", in the inputs' names.
  std::string text(const std::string& x, const std::string& y) const {
    const std::string names[6] = {"", x, y, x + "*" + x, x + "*" + y, y + "*" + y};
    std::string out;
    for (std::size_t k = 0; k < 6; ++k) {
      if (c[k] == 0) continue;
      const double m = std::fabs(c[k]);
      out += out.empty() ? (c[k] < 0 ? "-" : "") : (c[k] < 0 ? " - " : " + ");
      char number[32];
      std::snprintf(number, sizeof number, "%.3g", m);
      if (k == 0)
        out += number;
      else
        out += (m == 1 ? std::string() : std::string(number) + "*") + names[k];
    }
    return out.empty() ? "0" : out;
  }
};

// The least-squares quadratic through (x, y, v) of `points`, its coefficients rounded to 3
// significant digits (a student's constants are short: 0.5, 2, 0.01), and kept only when every
// point lies on it within rounding. `two` says whether y is an input (else terms in y are left
// out).
std::optional<Quadratic> fit_quadratic(const std::vector<std::array<double, 3>>& points, bool two) {
  const std::vector<std::size_t> used =
      two ? std::vector<std::size_t>{0, 1, 2, 3, 4, 5} : std::vector<std::size_t>{0, 1, 3};
  const std::size_t u = used.size();
  if (points.size() < 3 * u) return std::nullopt;
  // Normal equations, solved by Gaussian elimination with partial pivoting.
  std::vector<std::vector<double>> m(u, std::vector<double>(u + 1, 0.0));
  for (const auto& p : points) {
    const auto t = Quadratic::terms(p[0], p[1]);
    for (std::size_t r = 0; r < u; ++r) {
      for (std::size_t k = 0; k < u; ++k) m[r][k] += t[used[r]] * t[used[k]];
      m[r][u] += t[used[r]] * p[2];
    }
  }
  for (std::size_t col = 0; col < u; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < u; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    if (std::fabs(m[pivot][col]) < 1e-12) return std::nullopt;
    std::swap(m[col], m[pivot]);
    for (std::size_t r = 0; r < u; ++r) {
      if (r == col) continue;
      const double f = m[r][col] / m[col][col];
      for (std::size_t k = col; k <= u; ++k) m[r][k] -= f * m[col][k];
    }
  }
  Quadratic q;
  for (std::size_t r = 0; r < u; ++r) {
    double v = m[r][u] / m[r][r];
    if (std::fabs(v) < 1e-6) v = 0;
    if (v != 0) {
      const double magnitude = std::pow(10.0, std::floor(std::log10(std::fabs(v))) - 2);
      v = std::round(v / magnitude) * magnitude;
    }
    q.c[used[r]] = v;
  }
  for (const auto& p : points)
    if (std::fabs(q.at(p[0], p[1]) - p[2]) > q.slack(p[0], p[1])) return std::nullopt;
  return q;
}

// The wrong elements of a float output that follow one simple formula of the inputs (degree 2 or
// less in one or two of them; with one input, each sign of it apart, as a ReLU's branches): that
// formula, beside the right one. Found by fitting, whatever code produced it. "" when they do not.
std::string wrong_formula(const Outcome& o, const std::vector<Column>& inputs, Model model) {
  if (inputs.empty() || inputs.size() > 2) return "";
  const bool two = inputs.size() == 2;
  const std::string x = inputs[0].name, y = two ? inputs[1].name : "";
  // Ordinary values only: overflow, NaN and denormals follow no polynomial.
  auto usable = [](double v) { return std::isfinite(v) && std::fabs(v) < 1e15; };
  struct Region {
    const char* text;  // "" for the whole input range
    bool (*holds)(double);
  };
  const std::vector<Region> regions =
      two ? std::vector<Region>{{"", [](double) { return true; }}}
          : std::vector<Region>{{" < 0", [](double v) { return v < 0; }},
                                {" >= 0", [](double v) { return v >= 0; }}};
  // The right formula, computed in an order that loses precision where its terms cancel.
  auto lost_precision = [&](const Quadratic& right) {
    return "the output follows the right formula, " + right.text(x, y) +
           ", within the rounding of its terms, but the " + count(o.bad_count, "element") +
           " wrong are where those terms nearly cancel: the order of your operations subtracts "
           "large products and loses the digits that remain (as a*a - 2*a*b + b*b does for "
           "(a - b)^2 where a is close to b). Compute it the way the handout writes it.";
  };
  std::string found;
  std::size_t explained = 0, usable_bad = 0;
  for (std::size_t i = 0; i < o.n; ++i)
    if (o.bad[i] && !o.unwritten[i] && usable(o.got(i))) ++usable_bad;
  for (const Region& region : regions) {
    std::vector<std::array<double, 3>> got, want;
    for (std::size_t i = 0; i < o.n; ++i) {
      if (!o.bad[i] || o.unwritten[i]) continue;
      const double a = inputs[0].at(i), b = two ? inputs[1].at(i) : 0.0;
      if (!usable(a) || !usable(b) || !usable(o.got(i)) || !usable(o.want(i)) ||
          std::fabs(a) > 1e6 || std::fabs(b) > 1e6 || !region.holds(a))
        continue;
      got.push_back({a, b, o.got(i)});
      want.push_back({a, b, o.want(i)});
    }
    const std::optional<Quadratic> theirs = fit_quadratic(got, two);
    // A constant (0 everywhere) is no formula of the inputs: the zeros' own diagnoses say more.
    if (!theirs ||
        std::all_of(theirs->c.begin() + 1, theirs->c.end(), [](double c) { return c == 0; }))
      continue;
    const std::optional<Quadratic> right = fit_quadratic(want, two);
    explained += got.size();
    const std::string where = *region.text ? "where " + x + region.text + ", " : "";
    if (right && *right == *theirs)
      return lost_precision(*right);
    else
      found += (found.empty() ? "" : "; ") + where + "your output is " + theirs->text(x, y) +
               (right ? ", where the answer is " + right->text(x, y) : std::string());
  }
  // Wrong elements that follow no formula may be the few where a formula computed in float loses
  // its precision: every element, right or wrong, then follows the right formula within rounding.
  if (found.empty() && two) {
    std::vector<std::array<double, 3>> got, want;
    for (std::size_t i = 0; i < o.n; ++i) {
      const double a = inputs[0].at(i), b = inputs[1].at(i);
      if (o.unwritten[i] || !usable(a) || !usable(b) || !usable(o.got(i)) || !usable(o.want(i)) ||
          std::fabs(a) > 1e6 || std::fabs(b) > 1e6)
        continue;
      got.push_back({a, b, o.got(i)});
      want.push_back({a, b, o.want(i)});
    }
    const std::optional<Quadratic> theirs = fit_quadratic(got, two);
    const std::optional<Quadratic> right = fit_quadratic(want, two);
    if (theirs && right && *theirs == *right && got.size() >= o.n / 2)
      return lost_precision(*right);
  }
  // Most of the wrong elements must be explained, or the formula is chance.
  if (found.empty() || 10 * explained < 9 * usable_bad) return "";
  return "the " + count(explained, "wrong element") + " follow one formula of " +
         (two ? x + " and " + y : x) + ": " + found +
         ". Find the line of your code that computes this" +
         (model == Model::simd ? " (the SIMD loop and the scalar tail loop each have one)." : ".");
}

// The rows of a 2-D output that hold a wrong element: "rows 3, 7 and 9" or "12 of 64 rows".
std::string wrong_rows(const Outcome& o, std::size_t& wrong) {
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < o.rows; ++r)
    for (std::size_t c = 0; c < o.cols; ++c)
      if (o.bad[r * o.cols + c]) {
        rows.push_back(r);
        break;
      }
  wrong = rows.size();
  if (rows.size() > 4) return std::to_string(rows.size()) + " of " + count(o.rows, "row");
  std::string text = rows.size() == 1 ? "row " : "rows ";
  for (std::size_t i = 0; i < rows.size(); ++i)
    text += (i == 0 ? "" : i + 1 == rows.size() ? " and " : ", ") + std::to_string(rows[i]);
  return text;
}

// Float results that are integers' bit patterns read as floats: a small positive int is a denormal
// (17 reads 17 * 2^-149), a negative one a NaN, where the answers are ordinary numbers. A bitwise
// cast (xsimd::bitwise_cast, reinterpret_cast, memcpy) where a conversion was meant. "" when most
// wrong elements are not such.
std::string integer_bit_patterns(const Outcome& o, Model model) {
  std::size_t patterns = 0, denormals = 0, wrong = 0;
  for (std::size_t i = 0; i < o.n; ++i) {
    if (!o.bad[i] || o.unwritten[i]) continue;
    ++wrong;
    const double want = o.want(i);
    if (!std::isfinite(want) || std::fabs(want) < 1e-30) continue;
    const float got = static_cast<float>(o.got(i));
    const auto bits = std::bit_cast<std::int32_t>(got);
    const bool small_int = got != 0 && std::fabs(got) < std::numeric_limits<float>::min() &&
                           bits > 0 && bits < (1 << 24);
    const bool negative_int = std::isnan(got) && bits < 0;
    patterns += small_int || negative_int;
    denormals += small_int;
  }
  // NaN alone is what garbage gives too (memory never written, a race): the denormals of small
  // positive ints are the telling part.
  if (wrong < 4 || 10 * patterns < 9 * wrong || 4 * denormals < wrong) return "";
  return std::string(
             "the wrong results are integers' bit patterns read as floats: small denormals (the "
             "int 17 reads as 17 * 2^-149) and NaN (a negative int), where the answers are "
             "ordinary numbers. Your code reinterprets int32 values as float (") +
         (model == Model::simd ? "xsimd::bitwise_cast, " : "") +
         "reinterpret_cast, a memcpy, a union) where it means to convert them: static_cast<float>" +
         (model == Model::simd ? ", or xsimd::batch_cast<float> for a batch." : ".");
}

// Where the wrong elements of a 2-D output lie, when a leading block of columns (or rows) is right
// in every row and the wrong ones all come after it: "columns 0 to 63 are right in every row, and
// every wrong element lies in columns 64 to 126". A fact about the output, which loop or block it
// points to, without a guess at the cause. "" when the first column (row) already holds one.
std::string right_leading_block(const Outcome& o) {
  std::size_t first_col = o.cols, first_row = o.rows;
  for (std::size_t i = 0; i < o.n; ++i)
    if (o.bad[i]) {
      first_col = std::min(first_col, i % o.cols);
      first_row = std::min(first_row, i / o.cols);
    }
  // The block of columns (by_column) or rows before `first` is right; most of what lies past it is
  // wrong: a boundary, not a few scattered errors.
  auto boundary = [&](bool by_column, std::size_t first) -> std::string {
    const std::size_t extent = by_column ? o.cols : o.rows;
    if (first == 0 || first >= extent) return "";
    std::size_t past = 0, wrong = 0;
    for (std::size_t i = 0; i < o.n; ++i)
      if ((by_column ? i % o.cols : i / o.cols) >= first) ++past, wrong += o.bad[i];
    if (2 * wrong < past) return "";
    const std::string noun = by_column ? "column" : "row";
    const std::string where =
        (first == 1 ? noun + " 0 is" : noun + "s 0 to " + std::to_string(first - 1) + " are") +
        " right" + (by_column ? " in every row" : "") + ", and every wrong element lies in " +
        (first + 1 == extent
             ? noun + " " + std::to_string(first)
             : noun + "s " + std::to_string(first) + " to " + std::to_string(extent - 1)) +
        " (" + count(o.bad_count, "element") + " of " + std::to_string(o.n) + ")";
    // Every wrong element exactly 0 (and none of them 0 in the answer): the computation that
    // fills them ran for the first ones only.
    bool zeros = true;
    for (std::size_t i = 0; i < o.n && zeros; ++i)
      zeros = !o.bad[i] || (o.got(i) == 0 && o.want(i) != 0);
    if (zeros)
      return where + ", each of them exactly 0: what computes an element ran for the " +
             (first == 1 ? "first " + noun : "first " + std::to_string(first) + " " + noun + "s") +
             " only. Look for a loop index or a running value declared outside the loop over " +
             noun + "s (so not reset for each " + (by_column ? "element" : "row") +
             "), or a loop that ends after its first pass. Start from the first mismatch below.";
    return where + ": what computes the " + noun + "s from " + std::to_string(first) +
           " on is wrong (a block or tile of " + noun +
           "s after the first: its start, its offset into a buffer, its " +
           (by_column ? "width" : "height") + "). Start from the first mismatch below.";
  };
  if (std::string columns = boundary(true, first_col); !columns.empty()) return columns;
  return boundary(false, first_row);
}

// A CUDA kernel's wrong values with no simpler pattern: where they are, and the usual causes.
std::string diagnose_cuda(const Outcome& o) {
  std::string where = count(o.bad_count, "element") + " of " + std::to_string(o.n) + " are wrong";
  if (o.rows > 1) {
    std::size_t rows = 0;
    const std::string which = wrong_rows(o, rows);
    if (rows < o.rows) where += ", in " + which + " only";
  }
  return where +
         ", with no simple pattern. In a CUDA kernel this is most often a race: a thread reads "
         "shared memory before the threads that write it have (a __syncthreads() missing between "
         "the writes and the reads, or inside a loop over a reduction's steps), or reads memory "
         "that nothing wrote. Run this test under compute-sanitizer --tool racecheck (and "
         "--tool initcheck); then start from the first mismatch below.";
}

// "lab03" for a kernel in labs/03_thread_pool/..., for the commands a message suggests.
std::string lab_of(const Where& where) {
  const std::size_t at = where.file.find("labs/");
  if (at == std::string::npos || where.file.size() < at + 7) return "labNN";
  return "lab" + where.file.substr(at + 5, 2);
}

// How to build and run a lab's tests under ThreadSanitizer: a lab whose kernels use threads ships a
// preset <lab>-tsan (CMakePresets.json) that builds the student's files with -fsanitize=thread
// and runs the tests under it.
std::string tsan_command(const Where& where) {
  return "cmake --workflow --preset " + lab_of(where) + "-tsan";
}

// Threads' wrong values with no simpler pattern.
std::string diagnose_threads(const Outcome& o, const Where& where) {
  return count(o.bad_count, "element") + " of " + std::to_string(o.n) +
         " are wrong, with no simple pattern (the first at index " + std::to_string(o.first_bad()) +
         "). With threads, suspect two tasks writing the same elements, or a result read before "
         "the task that writes it has finished: build with ThreadSanitizer (" +
         tsan_command(where) + ") to see both accesses.";
}

// `level` says how much the diagnosis returned tells (see Specificity): a generic pattern, unless
// set to observed where only the symptom is known.
template <class T>
std::string diagnose(const Outcome& o, const Tolerance& tol, const Where& where,
                     std::size_t loop_lanes, Specificity& level) {
  level = Specificity::pattern;
  auto observed = [&level](std::string text) {
    level = Specificity::observed;
    return text;
  };
  const Model model = where.model;
  const std::size_t lanes = loop_lanes > 0 ? loop_lanes : kLanes<T>;
  const std::size_t n = o.n;
  if (o.unwritten_count == n && model == Model::simd && n < lanes)
    return observed(
        "the output was never written, and n = " + std::to_string(n) +
        " is less than one SIMD batch of " + std::to_string(lanes) +
        ": only a scalar tail loop writes anything at this size. Is yours missing, or does it "
        "stop early? After the SIMD loop, finish the remaining elements one at a time.");
  if (o.unwritten_count == n)
    return observed(
        "the output was never written: every element still holds the poison value (a NaN the "
        "harness put there before the call). " +
        std::string(model == Model::cuda
                        ? "Was the kernel launched (check cudaGetLastError after it), with "
                          "the output's device pointer?" +
                              std::string(n < 4 ? " With n < 4 there is no whole float4: a "
                                                  "float4 loop alone writes nothing, so the "
                                                  "last n % 4 floats need threads of their own."
                                                : "")
                        : "Did you write into a local copy, or return early?"));

  // "Never written" is read from the poison: a kernel that loads from its output instead of its
  // input writes that poison back (ReLU of a NaN is the NaN), which reads the same.
  if (o.all_bad_unwritten()) {
    std::string text = diagnose_unwritten(o, model, lanes, level);
    if (model == Model::simd && text.find("loaded from the output") == std::string::npos)
      text +=
          " (If your loop does store to them, look at what it loads there: a load from the "
          "output instead of the input stores the poison back.)";
    return text;
  }

  bool all_zero = true, any_nonzero_want = false;
  for (std::size_t i = 0; i < n && all_zero; ++i) {
    all_zero = o.got(i) == 0;
    any_nonzero_want |= o.want(i) != 0;
  }
  if (all_zero && any_nonzero_want)
    return observed(
        "the output is all zeros: the kernel stores zeros, or stores before computing anything. "
        "Check what your loop writes.");

  // NaN semantics: NaN in, NaN out (as PyTorch does); finite in, finite out.
  std::size_t swallowed = 0, invented = 0, nan_related = 0, first_swallowed = n, first_invented = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (!o.bad[i] || o.unwritten[i]) continue;
    const double g = o.got(i), w = o.want(i);
    if (std::isnan(w) && !std::isnan(g)) {
      if (swallowed++ == 0) first_swallowed = i;
      ++nan_related;
    } else if (std::isnan(g) && !std::isnan(w)) {
      if (invented++ == 0) first_invented = i;
      ++nan_related;
    }
  }
  if (swallowed > 0 && nan_related == o.bad_count)
    return "NaN inputs must give NaN (as in PyTorch), but " + count(swallowed, "NaN") +
           " became a number (first at index " + std::to_string(first_swallowed) + ", you wrote " +
           fmt(o.got(first_swallowed)) +
           "). Every comparison with NaN is false, so `x > 0 ? x : 0` "
           "maps NaN to 0 while `x < 0 ? 0 : x` keeps it" +
           (model == Model::simd ? "; the same holds for a SIMD select." : ".");
  if (invented > 0 && nan_related == o.bad_count)
    return observed("the kernel produced NaN where the answer is a number (" +
                    count(invented, "element") + ", first at index " +
                    std::to_string(first_invented) +
                    "): an uninitialised value, a 0/0 or inf - inf, or a read past the input.");

  double c = 0;
  if (constant_pattern(o, false, tol, c))
    return "every element is off by the same constant, " + fmt(c) +
           ": a stray term added to every element (or, in a loop that accumulates, a sum that "
           "does not start at zero).";
  // What one factor on a whole output (or most of it) usually is: 2, a sum added in twice.
  const auto factor_causes = [](double factor) {
    return std::fabs(factor - 2) < 1e-3
               ? std::string(
                     ": each sum is added in twice (an accumulator added to itself, "
                     "acc += acc, as when a loop that combines several accumulators "
                     "starts at the one it adds into; a block or a tail counted again), "
                     "or one scale is applied twice.")
               : std::string(": a scale applied twice or not at all, or a wrong normalisation.");
  };
  if (constant_pattern(o, true, tol, c)) {
    if (std::fabs(c + 1) < 1e-6) return "every element has the wrong sign.";
    return (std::fabs(c - 2) < 1e-3 ? std::string("every element is exactly twice its answer")
                                    : "every element is scaled by the same factor, " + fmt(c)) +
           factor_causes(c);
  }
  std::size_t scaled = 0, other_columns = 0;
  const bool mostly = mostly_scaled(o, tol, c, scaled, other_columns);
  if (mostly && scaled == n)
    return (c == 2 ? std::string("every element is exactly twice its answer")
                   : "every element is scaled by the same factor, " + fmt(c)) +
           " (within the rounding of its sum)" + factor_causes(c);
  if (mostly)
    return std::to_string(scaled) + " of " + std::to_string(n) + " elements are exactly " +
           (c == 2 ? std::string("twice their answer") : fmt(c) + " times it") +
           (other_columns > 0 ? " (all but the last " + count(other_columns, "column") +
                                    " of each row, which are wrong another way: a narrower last "
                                    "tile that your code computes by another path)"
                              : std::string(", the others wrong another way")) +
           factor_causes(c);
  if (shifted_by(o, 1) || shifted_by(o, -1))
    return "the output is shifted by one element: out[i] holds the answer for i " +
           std::string(shifted_by(o, 1) ? "+ 1" : "- 1") +
           ". Check the index you load or store at.";
  if (transposed(o, tol))
    return "the output is transposed: element [i][j] holds the answer for [j][i]. Check the order "
           "of your row and column indices (and the leading dimension you multiply by).";

  std::size_t width = 0;
  bool wrong_are_zero = o.bad_count > 0;
  for (std::size_t i = 0; i < n && wrong_are_zero; ++i)
    wrong_are_zero = !o.bad[i] || (!o.unwritten[i] && o.got(i) == 0);
  std::size_t tile_rows = 0, tile_width = 0, edge = 0;
  bool width_known = false;
  if (tile_buffer_misread(o, tol, tile_rows, tile_width, width_known, edge)) {
    const std::string w = width_known ? std::to_string(tile_width) : "the tile's width",
                      e = std::to_string(edge);
    return "the tiles at the right edge (the last " + count(edge, "column") +
           ", a partial tile) hold right answers from the wrong places: their rows after the "
           "first are other elements of the tile, or 0. That is a tile's buffer, with rows " +
           w + " apart, read at i * " + e +
           " + j (the columns the tile covers in C) instead of i * " +
           (width_known ? w : std::string("width")) + " + j: index the buffer with its own width.";
  }
  if (std::string moved = moved_answers(o, tol); !moved.empty()) return moved;
  std::size_t right_rows = 0;
  if (later_blocks_of_rows_wrong(o, right_rows))
    return "rows 0 to " + std::to_string(right_rows - 1) + " (the first " +
           std::to_string(right_rows) + ") are right, and every row from " +
           std::to_string(right_rows) +
           " on is wrong: the first block of rows is computed right and the later ones are not. "
           "Check where each later block (tile) of rows starts, in every buffer it reads or "
           "writes: A, C, and any packed copy of A (panels of " +
           std::to_string(right_rows) +
           " rows lie that many rows times the depth of this block of k apart, and the last block "
           "of k may be shallower than the others).";
  if (later_rows_start_wrong(o, width) && wrong_are_zero)
    return observed(
        "row 0 is right, and every wrong element of the later rows is 0 (" +
        count(o.bad_count, "element") +
        "): those rows were never given their values. Either the loop over rows stops after the "
        "first, or their stores, or the reads they copy from (a tile's buffer, its zero "
        "padding), step from row to row by a wrong offset: check the row bound, and the row "
        "stride of every matrix and buffer you index, C's ld and a local tile's width alike.");
  if (later_rows_start_wrong(o, width))
    return "row 0 is right, and in every later row " +
           (width < o.cols
                ? "the first " + count(width, "column") + (width == 1 ? " is" : " are") + " wrong"
                : std::string("every element is wrong")) +
           ": what writes past the end of each row do where rows lie N = " +
           std::to_string(o.cols) + " apart: they land at the start of the next row. " +
           (model == Model::cuda
                ? "Threads whose column is past N stored anyway: guard the store with col < "
                  "cols."
                : "Check the bound of your column loop: a block of columns (or a row's last "
                  "batch) must end at N, min(j0 + block, N), not a whole block further.") +
           (width < o.cols ? std::string()
                           : " Whole rows wrong after a right first row are also what a wrong "
                             "start of each row gives: check the offset of row i in every matrix "
                             "or buffer a row is read from or stored to, i times that one's own "
                             "row stride (its ld; a local tile buffer's width), not another's.");
  // A remainder is smaller than the full blocks before it: with half the rows or columns (or
  // more) wrong, "the last rows" is not a remainder.
  std::size_t kr = 0, kc = 0;
  // The wrong part is the last, partial block, or every block after the first (a block's start
  // or its offset wrong) where there is one full block before it: one shape cannot tell them
  // apart, so both are said.
  if (o.rows > 1 && bad_in_tails(o, kr, kc) && 2 * kr < o.rows && 2 * kc < o.cols &&
      model != Model::cuda) {
    const std::string columns =
        "columns " + std::to_string(o.cols - kc) + " to " + std::to_string(o.cols - 1);
    const std::string rows =
        "rows " + std::to_string(o.rows - kr) + " to " + std::to_string(o.rows - 1);
    const std::string region = kc > 0 && kr > 0 ? columns + " and " + rows
                               : kc > 0         ? columns
                                                : rows;
    return "only " + last_rows_and_columns(kr, kc) + (kr + kc == 1 ? " is" : " are") + " wrong (" +
           region + "; M = " + std::to_string(o.rows) + ", N = " + std::to_string(o.cols) +
           "), the ones before are right. What computes them is wrong: the last, partial block "
           "(or tile) of " +
           (kc > 0 ? "columns" : "rows") +
           ", or every block after the first (its start, its offset into a packed buffer), "
           "which in this shape may be the same one" +
           (bad_ones_doubled(o, tol)
                ? ". Each of them holds exactly twice its answer: they are computed twice (a pass "
                  "over the leftover columns for every row and one over the leftover rows for "
                  "every column both cover the corner where they meet; or a sum added into C "
                  "twice)."
                : ".");
  }
  // Some elements computed twice: which ones says which loop ran over them twice.
  if (o.bad_count >= 2 && bad_ones_doubled(o, tol)) {
    std::string where_bad = count(o.bad_count, "element") + " (the first at index " +
                            std::to_string(o.first_bad()) + ")";
    bool corner = false;
    if (o.rows > 1) {
      std::size_t first_row = o.rows, last_row = 0, first_col = o.cols, last_col = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (o.bad[i]) {
          first_row = std::min(first_row, i / o.cols);
          last_row = std::max(last_row, i / o.cols);
          first_col = std::min(first_col, i % o.cols);
          last_col = std::max(last_col, i % o.cols);
        }
      corner = last_row + 1 == o.rows && last_col + 1 == o.cols && first_row > 0 && first_col > 0 &&
               // Most of the rectangle: a doubled element near 0 can stay within the bound.
               10 * o.bad_count >= 9 * (o.rows - first_row) * (o.cols - first_col);
      where_bad = count(o.bad_count, "element") + ", in rows " + std::to_string(first_row) +
                  " to " + std::to_string(last_row) + " and columns " + std::to_string(first_col) +
                  " to " + std::to_string(last_col);
    }
    return "the " + where_bad + " that are wrong each hold exactly twice their answer: they were " +
           "computed twice, or their sums added in twice. " +
           (corner ? "They are the bottom-right corner: a pass over the leftover columns for "
                     "every row and one over the leftover rows for every column both cover the "
                     "corner where they meet."
                   : "A loop over a block that runs on past the block's end (to n instead of "
                     "the block's end) covers the next block's elements too; so do two loops "
                     "that both take the leftover ones.");
  }
  if (model == Model::cuda) return observed(diagnose_cuda(o));
  if (model == Model::threads) return observed(diagnose_threads(o, where));
  // The SIMD tail and head are those of one flat array, and only a contrast with right elements
  // in the full batches points at them: a matrix's elements, or an output wrong everywhere (n = 9
  // elements, all in the "tail"), say nothing of a tail loop.
  const bool flat_contrast = o.rows <= 1 && n >= lanes && o.bad_count < n;
  const std::size_t tail = flat_contrast ? n % lanes : 0;
  if (tail > 0 && o.first_bad() >= n - tail && tail_restarts_at_zero(o, tail, tol))
    return "the last " + count(tail, "element") + " (after the last full SIMD batch, " +
           batches_of(n, lanes) + ") hold the answers for elements 0 to " +
           std::to_string(tail - 1) +
           ": your tail loop restarts from index 0 instead of where the SIMD loop stopped. Start "
           "it at the index the SIMD loop ended on.";
  if (tail > 0 && o.bad_exactly(n - o.bad_count, n) && o.bad_count <= tail)
    return "only the last " + count(o.bad_count, "element") +
           " are wrong, the ones after the last full SIMD batch (" + batches_of(n, lanes) +
           "): check your scalar tail loop.";
  if (flat_contrast && o.bad_exactly(0, o.bad_count) && o.bad_count < lanes)
    return "only the first " + count(o.bad_count, "element") +
           " are wrong: check how your loop starts (the elements before the first full batch).";
  std::size_t lane = 0;
  for (std::size_t w : {std::size_t{4}, std::size_t{8}, std::size_t{16}, lanes}) {
    if (w <= n / 2 && one_lane(o, w, lane))
      return "only lane " + std::to_string(lane) + " of each " + std::to_string(w) +
             "-wide batch is wrong (indices " + std::to_string(lane) + ", " +
             std::to_string(lane + w) + ", ...): check how you address lanes inside a batch.";
  }
  if (std::string bits = integer_bit_patterns(o, model); !bits.empty()) return bits;
  if (o.rows > 1) {
    // An observation, not a pattern: a named pattern of another case says more.
    if (std::string region = right_leading_block(o); !region.empty()) return observed(region);
  }
  return observed(count(o.bad_count, "element") + " of " + std::to_string(n) +
                  " are wrong, with no simple pattern; start from the first mismatch below.");
}

std::string where_line(const Where& w) {
  return "edit " + w.file + ": " + w.function;
}

// What writes past the end of an output, in the kernel's terms.
std::string past_the_end_advice(Model model) {
  switch (model) {
    case Model::cuda:
      return "Threads past the end stored anyway: the last block has threads with i >= n, so guard "
             "the store with `if (i < n)` (in a 2-D kernel both indices, `if (row < rows && col < "
             "cols)`; a float4 store needs 4 elements left, else the last n % 4 go one by one); "
             "compute-sanitizer --tool memcheck names the line.";
    case Model::threads:
      return "The last chunk runs past n: end each chunk at min(begin + grain, n), and give "
             "subspan a count (end - begin), not an end.";
    case Model::simd:
      break;
  }
  return "The last full batch must end at or before n; finish the rest one by one.";
}

// Does every element match the mistake's wrong answer, within the check's bound (twice it: the
// wrong formula, computed in float32, rounds about as the right one does)?
template <class T>
bool matches_mistake(const Outcome& o, const Mistake& m, const ElementwiseCheck& how) {
  const Tolerance& tol = how.tolerance;
  const bool exact = tol.rel == 0 && tol.abs == 0;
  for (std::size_t i = 0; i < o.n; ++i) {
    const double a = m.answer(i), g = o.got(i);
    if (std::isnan(a)) {
      if (!o.unwritten[i] && !std::isnan(g)) return false;
      continue;
    }
    if (o.unwritten[i] || std::isnan(g)) return false;
    const double representable = is_float_output<T> ? static_cast<double>(static_cast<T>(a)) : a;
    if (std::isinf(representable) || exact) {
      if (g != representable) return false;
      continue;
    }
    double scale = how.scale ? how.scale(i) : std::fabs(a);
    if (m.scale) scale = std::max(scale, m.scale(i));
    if (!(std::fabs(g - a) <= 2 * (tol.rel * scale + tol.abs))) return false;
  }
  return true;
}

// Records in r the lab's mistakes that the output matches (the first as its diagnosis), and those
// whose output equals the right one here (ruled out: no case of theirs can fail).
template <class T>
void named_mistakes(const Outcome& o, const ElementwiseCheck& how, CheckResult& r) {
  for (const Mistake& m : how.mistakes()) {
    if (gives_the_right_answer(m, o.n, o.want)) {
      r.ruled_out.push_back(m.name());
    } else if (matches_mistake<T>(o, m, how)) {
      r.add_match(m, "your output matches " + m.what + ": " + m.advice);
    }
  }
}

// What an output that changes between two runs on the same inputs means, in the kernel's terms.
std::string race_text(const Where& where, std::size_t changed, std::size_t first,
                      const std::string& was, const std::string& now) {
  std::string text = "the output differs between two runs with the same inputs (" +
                     count(changed, "element") + ", the first at index " + std::to_string(first) +
                     ": " + was + ", then " + now + "). ";
  switch (where.model) {
    case Model::cuda:
      return text +
             "That is a race: threads read shared or global memory before the threads that write "
             "it have (a missing __syncthreads(), or blocks that depend on each other), or read "
             "memory nothing wrote. Run this test under compute-sanitizer --tool racecheck (and "
             "--tool initcheck): it names the two accesses.";
    case Model::threads:
      return text +
             "That is a race: two threads write the same elements, or a result is read before "
             "the task that writes it has finished. Build with ThreadSanitizer (" +
             tsan_command(where) + "): it names both accesses and their threads.";
    case Model::simd:
      break;
  }
  return text +
         "One thread computed it, so the kernel reads memory it never wrote: an accumulator "
         "that is not initialised, or a load past the end of an input.";
}

}  // namespace

bool gives_the_right_answer(const Mistake& m, std::size_t n,
                            const std::function<double(std::size_t)>& want) {
  for (std::size_t i = 0; i < n; ++i) {
    const double a = m.answer(i), w = want(i);
    if (std::isnan(a) || std::isnan(w)) {
      if (std::isnan(a) != std::isnan(w)) return false;
      continue;
    }
    if (!(std::fabs(a - w) <= 1e-12 * std::fabs(w) + 1e-300)) return false;
  }
  return true;
}

template <class T>
std::size_t simd_lanes() {
  return kLanes<T>;
}
template std::size_t simd_lanes<float>();
template std::size_t simd_lanes<std::int8_t>();
template std::size_t simd_lanes<std::int32_t>();

// --- Tolerances ----------------------------------------------------------------------------------

double gamma_float(double k) {
  return k * kFloatUnitRoundoff / (1 - k * kFloatUnitRoundoff);
}

Tolerance Tolerance::exact() {
  return {0, 0,
          "exact: the result selects or copies input values, so it must equal the oracle "
          "bit for bit (the sign of zero is not checked)"};
}

Tolerance Tolerance::roundings(int k) {
  return {gamma_float(k), k * static_cast<double>(std::numeric_limits<float>::denorm_min()),
          std::to_string(k) + " float32 rounding" + (k == 1 ? "" : "s") +
              " between the inputs and the result: |error| <= gamma_" + std::to_string(k) +
              " |exact| with gamma_k = k u / (1 - k u), u = 2^-24 (plus k * 2^-149 in the "
              "denormal range)"};
}

Tolerance Tolerance::sum_of(std::size_t terms) {
  return {gamma_float(static_cast<double>(terms)), 0,
          "a float32 sum of " + std::to_string(terms) + " terms, in any order: |error| <= gamma_" +
              std::to_string(terms) +
              " * sum|terms| with gamma_n = n u / (1 - n u), u = 2^-24 "
              "(Higham, Accuracy and Stability of Numerical Algorithms, 2002, section 4.2)"};
}

Column column(std::string name, std::span<const float> values) {
  return {std::move(name), [values](std::size_t i) { return static_cast<double>(values[i]); }};
}
Column column(std::string name, std::span<const std::int8_t> values) {
  return {std::move(name), [values](std::size_t i) { return static_cast<double>(values[i]); }};
}

// --- Reports -------------------------------------------------------------------------------------

std::string CheckResult::report() const {
  if (ok) return "ok: " + std::to_string(checked) + " checked";
  std::ostringstream out;
  out << summary << "\n";
  if (!diagnosis.empty()) out << "  Diagnosis: " << diagnosis << "\n";
  if (!details.empty()) out << details;
  if (!tolerance.empty()) out << "  Tolerance: " << tolerance << "\n";
  if (checked > 0 && wrong > 0 && max_abs_error > 0) {
    out << "  Errors: max |error| " << fmt(max_abs_error) << ", norm-wise relative error "
        << fmt(rel_error);
    if (max_ulps > 0) out << ", max " << fmt(max_ulps) << " ULP";
    out << "\n";
  }
  out << "  Next: " << edit << "\n";
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const CheckResult& result) {
  return out << result.report();
}

// --- Elementwise ---------------------------------------------------------------------------------

template <class T>
CheckResult check_elementwise(const GuardedBuffer<T>& buffer,
                              const std::function<double(std::size_t)>& want,
                              const ElementwiseCheck& how) {
  Shape shape = how.shape;
  if (shape.cols == 0) shape = {1, buffer.size(), buffer.size()};
  if (shape.ld == 0) shape.ld = shape.cols;
  if (shape.ld < shape.cols ||
      (shape.rows > 0 && (shape.rows - 1) * shape.ld + shape.cols > buffer.size()))
    throw std::invalid_argument("check_elementwise: a " + std::to_string(shape.rows) + " x " +
                                std::to_string(shape.cols) + " output with ld " +
                                std::to_string(shape.ld) + " does not fit a buffer of " +
                                std::to_string(buffer.size()));

  CheckResult r;
  r.edit = where_line(how.where);
  r.tolerance = how.tolerance.derivation;
  auto at = [&](std::size_t i) { return (i / shape.cols) * shape.ld + i % shape.cols; };

  // Memory safety first: a write outside the output corrupts whatever lives there.
  const GuardDamage damage = buffer.damage();
  std::size_t padding_written = 0, first_padding = 0;
  for (std::size_t row = 0; row + 1 < shape.rows; ++row)
    for (std::size_t c = shape.cols; c < shape.ld; ++c)
      if (!buffer.is_poison(row * shape.ld + c) && padding_written++ == 0) first_padding = row;
  if (!damage.intact() || padding_written > 0) {
    r.ok = false;
    r.summary = how.where.function + ": wrote outside the output";
    r.specificity = Specificity::pattern;
    // Every row written out to ld, the last one past the end by ld - cols: a row loop bounded by
    // the leading dimension.
    const std::size_t gap = shape.ld - shape.cols;
    if (gap > 0 && damage.before == 0 && damage.after == std::min(gap, GuardedBuffer<T>::kGuard) &&
        damage.first_after == 0 && padding_written == (shape.rows - 1) * gap)
      r.diagnosis =
          "wrote every row out to ld = " + std::to_string(shape.ld) + ": " +
          (shape.rows > 1 ? "the padding between rows (columns " + std::to_string(shape.cols) +
                                " to " + std::to_string(shape.ld - 1) + "), and "
                          : std::string()) +
          std::to_string(gap) +
          " elements past the end of the last row, exactly ld - cols. The loop over a "
          "row's columns runs to the leading dimension instead of the row's length: "
          "ld is the step from one row to the next, cols the bound of each row.";
    else if (damage.after > 0)
      r.diagnosis = "wrote past the end of the output: " + count(damage.after, "element") +
                    " after the last one changed (the first " +
                    (damage.first_after == 0 ? std::string("right after it")
                                             : std::to_string(damage.first_after) + " past it") +
                    "). " + past_the_end_advice(how.where.model);
    else if (damage.before > 0)
      r.diagnosis = "wrote before the first element of the output (" +
                    count(damage.before, "element") + "): check a negative or shifted index.";
    else
      r.diagnosis = "wrote into the padding between rows (row " + std::to_string(first_padding) +
                    ", columns " + std::to_string(shape.cols) + " to " +
                    std::to_string(shape.ld - 1) +
                    "): step between rows by ld, but write only "
                    "the first cols elements of each.";
    return r;
  }

  // First pass: compare, and gather the error metrics over elements where both sides are finite.
  // A passing output (the common case, and 64 Mi elements in a perf test) needs nothing more.
  std::size_t bad_count = 0;
  double sum_sq_err = 0, sum_sq_want = 0;
  auto compare = [&](auto&& on_element) {
    for (std::size_t row = 0, i = 0; row < shape.rows; ++row) {
      const T* line = buffer.data() + row * shape.ld;
      for (std::size_t col = 0; col < shape.cols; ++col, ++i) {
        const double w = want(i);
        const double g = as_double(line[col]);
        const bool unwritten = Poison<T>::is_value(line[col]);
        const double scale = how.scale ? how.scale(i) : std::fabs(w);
        on_element(i, g, w, unwritten, !matches<T>(g, unwritten, w, scale, how.tolerance));
      }
    }
  };
  compare([&](std::size_t, double g, double w, bool unwritten, bool bad) {
    bad_count += bad;
    if (unwritten || !std::isfinite(g) || !std::isfinite(w)) return;
    const double e = std::fabs(g - w);
    if (e == 0) return;  // exact: nothing to add (and no dependent sum to wait on)
    sum_sq_err += e * e;
    r.max_abs_error = std::max(r.max_abs_error, e);
    if constexpr (is_float_output<T>) {
      const double ulp = ulp_of(w);
      if (ulp > 0 && std::isfinite(ulp)) r.max_ulps = std::max(r.max_ulps, e / ulp);
    }
  });
  if (sum_sq_err > 0) {  // the norm of the answer matters only when there is an error to scale
    compare([&](std::size_t, double g, double w, bool unwritten, bool) {
      if (!unwritten && std::isfinite(g) && std::isfinite(w)) sum_sq_want += w * w;
    });
  }
  r.rel_error = sum_sq_want > 0 ? std::sqrt(sum_sq_err / sum_sq_want) : std::sqrt(sum_sq_err);
  r.checked = shape.rows * shape.cols;
  r.wrong = bad_count;
  if (bad_count == 0) return r;

  // Second pass, on failure only: which elements, for the diagnosis.
  Outcome o;
  o.rows = shape.rows;
  o.cols = shape.cols;
  o.n = r.checked;
  o.got = [&](std::size_t i) { return as_double(buffer[at(i)]); };
  o.want = want;
  o.scale = how.scale;
  o.bad.assign(o.n, 0);
  o.unwritten.assign(o.n, 0);
  compare([&](std::size_t i, double, double, bool unwritten, bool bad) {
    o.unwritten[i] = unwritten;
    o.unwritten_count += unwritten;
    o.bad[i] = bad;
    o.bad_count += bad;
  });

  r.ok = false;
  r.first_wrong = o.first_bad();
  r.summary = how.where.function + ": " + std::to_string(o.bad_count) + " of " +
              std::to_string(o.n) + " elements are wrong (first at " +
              (o.rows > 1 ? "row " + std::to_string(r.first_wrong / o.cols) + ", column " +
                                std::to_string(r.first_wrong % o.cols)
                          : "index " + std::to_string(r.first_wrong)) +
              ")";
  if (o.unwritten_count < o.n && how.mistakes) named_mistakes<T>(o, how, r);
  const std::size_t lanes = how.lanes > 0 ? how.lanes : kLanes<T>;
  if (!r.diagnosis.empty()) {
    r.specificity = Specificity::mistake;
  } else if (std::string branch = unwritten_by_sign(o, how.inputs, how.where.model, lanes);
             !branch.empty()) {
    r.diagnosis = std::move(branch);
    r.diagnosis_key = "left unwritten where an input has one sign";
    r.specificity = Specificity::pattern;
  } else {
    r.diagnosis = diagnose<T>(o, how.tolerance, how.where, how.lanes, r.specificity);
    if constexpr (is_float_output<T>) {
      if (r.specificity <= Specificity::observed)
        if (std::string formula = wrong_formula(o, how.inputs, how.where.model); !formula.empty()) {
          r.diagnosis = std::move(formula);
          r.diagnosis_key = "the wrong elements follow a formula of the inputs";
          r.specificity = Specificity::pattern;
        }
    }
  }

  std::ostringstream d;
  d << "  First mismatches:\n    " << (o.rows > 1 ? "  row,col" : "    index");
  for (const Column& c : how.inputs)
    d << " " << std::string(std::max<int>(0, 14 - int(c.name.size())), ' ') << c.name;
  d << "            got       expected\n";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < o.n && shown < 6; ++i) {
    if (!o.bad[i]) continue;
    ++shown;
    char index[48];
    if (o.rows > 1)
      std::snprintf(index, sizeof index, "%5zu,%-3zu", i / o.cols, i % o.cols);
    else
      std::snprintf(index, sizeof index, "%9zu", i);
    char line[160];
    d << "    " << index;
    for (const Column& c : how.inputs) {
      std::snprintf(line, sizeof line, " %14s", fmt(c.at(i)).c_str());
      d << line;
    }
    const std::string got = o.unwritten[i] ? "(unwritten)" : fmt(o.got(i));
    std::snprintf(line, sizeof line, " %14s %14s\n", got.c_str(), fmt(want(i)).c_str());
    d << line;
  }
  r.details = d.str();

  // The same inputs, once more: an output that changes is a race, whatever its pattern looked like.
  if (how.run_again) {
    std::vector<T> first(o.n);
    for (std::size_t i = 0; i < o.n; ++i) first[i] = buffer[at(i)];
    how.run_again();
    std::size_t changed = 0, first_changed = 0;
    for (std::size_t i = 0; i < o.n; ++i)
      if (std::memcmp(&first[i], &buffer[at(i)], sizeof(T)) != 0 && changed++ == 0)
        first_changed = i;
    if (changed > 0) {
      r.unstable = true;
      // A race outranks the pattern of one run (which may be chance), not a named mistake.
      r.specificity = std::max(r.specificity, Specificity::pattern);
      auto shown = [&](T v) { return Poison<T>::is_value(v) ? "(unwritten)" : fmt(as_double(v)); };
      r.diagnosis = race_text(how.where, changed, first_changed, shown(first[first_changed]),
                              shown(buffer[at(first_changed)])) +
                    " (What the first run looked like: " + r.diagnosis + ")";
    }
  }
  return r;
}

template CheckResult check_elementwise<float>(const GuardedBuffer<float>&,
                                              const std::function<double(std::size_t)>&,
                                              const ElementwiseCheck&);
template CheckResult check_elementwise<std::int8_t>(const GuardedBuffer<std::int8_t>&,
                                                    const std::function<double(std::size_t)>&,
                                                    const ElementwiseCheck&);
template CheckResult check_elementwise<std::int32_t>(const GuardedBuffer<std::int32_t>&,
                                                     const std::function<double(std::size_t)>&,
                                                     const ElementwiseCheck&);

// --- Reductions ----------------------------------------------------------------------------------

namespace {

// The sum of a reduction's terms and of their magnitudes, accurately.
struct ReductionSums {
  double sum = 0, magnitude = 0;
};
ReductionSums reduction_sums(const ReductionOracle& oracle) {
  AccurateSum sum, magnitude;
  for (std::size_t i = 0; i < oracle.terms; ++i) {
    const double t = oracle.term(i);
    sum.add(t);
    magnitude.add(std::fabs(t));
  }
  return {sum.value(), magnitude.value()};
}

// The interval a result may fall in when the exact sum is `centre`: the sum's bound (`slack`)
// mapped through finish, plus the result's rounding.
Interval interval_around(const ReductionOracle& oracle, double centre, double slack) {
  Interval i{oracle.finish(centre - slack), oracle.finish(centre + slack)};
  i.lo -= gamma_float(1) * std::fabs(i.lo) + std::numeric_limits<float>::denorm_min();
  i.hi += gamma_float(1) * std::fabs(i.hi) + std::numeric_limits<float>::denorm_min();
  return i;
}

double reduction_slack(const ReductionOracle& oracle, double magnitude) {
  return gamma_float(static_cast<double>(oracle.terms + oracle.extra_roundings)) * magnitude;
}

}  // namespace

Interval reduction_interval(const ReductionOracle& oracle) {
  const ReductionSums sums = reduction_sums(oracle);
  const double want = oracle.finish(sums.sum);
  if (!std::isfinite(want)) return {want, want};
  return interval_around(oracle, sums.sum, reduction_slack(oracle, sums.magnitude));
}

CheckResult check_reduction(double got, const ReductionOracle& oracle, const Where& where,
                            const Mistakes& mistakes) {
  const std::size_t n = oracle.terms;
  const ReductionSums sums = reduction_sums(oracle);
  const double s = sums.sum;
  const double want = oracle.finish(s);
  const double slack = reduction_slack(oracle, sums.magnitude);

  auto interval = [&](double centre, double& lo, double& hi) {
    const Interval i = interval_around(oracle, centre, slack);
    lo = i.lo;
    hi = i.hi;
  };
  auto near = [&](double candidate_sum) {
    double lo, hi;
    interval(candidate_sum, lo, hi);
    return got >= lo && got <= hi;
  };

  CheckResult r;
  r.checked = 1;
  r.edit = where_line(where);
  r.tolerance = Tolerance::sum_of(n + oracle.extra_roundings).derivation +
                ", with sum|terms| = " + fmt(sums.magnitude);
  if (!std::isfinite(want)) {
    r.ok = std::isnan(want) ? std::isnan(got) : got == want;
  } else {
    r.ok = near(s);
  }
  // A passing case rules out each mistake of the catalogue whose result it would not have
  // accepted: "every other batch left out" fits the sizes that fail, yet the sizes that pass would
  // have failed with it. (Up to 64 Ki terms: the catalogue costs a pass over the input per entry.)
  // Beyond twice the bound, so that the mistake's own rounding could not have brought it within.
  if (r.ok && mistakes && std::isfinite(want) && n <= (std::size_t{1} << 16)) {
    double lo, hi;
    interval(s, lo, hi);
    for (const Mistake& m : mistakes())
      if (const double a = m.answer(0); !m.scale && !(std::fabs(a - s) <= hi - lo))
        r.ruled_out.push_back(m.name());
  }
  if (r.ok) return r;

  double lo, hi;
  interval(s, lo, hi);
  r.wrong = 1;
  r.specificity = Specificity::pattern;  // unless set below: a mistake, or only what was observed
  r.max_abs_error = std::fabs(got - want);
  r.rel_error = want != 0 ? r.max_abs_error / std::fabs(want) : r.max_abs_error;
  r.summary = where.function + ": returned " + fmt(got) + ", expected " + fmt(want) +
              " (n = " + std::to_string(n) + ")";
  r.details = "  Allowed: [" + fmt(lo) + ", " + fmt(hi) + "]; the error is " +
              (hi > lo ? fmt(2 * r.max_abs_error / (hi - lo)) : std::string("inf")) +
              " times the bound.\n";

  const std::size_t lanes = kLanes<float>;
  auto partial = [&](auto keep) {
    AccurateSum p;
    for (std::size_t i = 0; i < n; ++i)
      if (keep(i)) p.add(oracle.term(i));
    return p.value();
  };

  // The final step (a distance's square root) taken over the whole batches' sum, before the
  // scalar tail adds its terms (to the result, or finished on their own).
  const auto finished_before_the_tail = [&]() -> std::string {
    const std::size_t whole = n / lanes * lanes;
    if (where.model != Model::simd || whole == 0 || whole == n || oracle.finish(s) == s ||
        !std::isfinite(got))
      return "";
    const double main = partial([whole](std::size_t i) { return i < whole; });
    const double tail = partial([whole](std::size_t i) { return i >= whole; });
    double lo, hi;
    interval(s, lo, hi);
    for (const double candidate :
         {oracle.finish(main) + tail, oracle.finish(main) + oracle.finish(tail)})
      if (std::fabs(got - candidate) <= hi - lo)
        return "your result is the final step (for a distance: the square root) of the whole "
               "batches' sum (elements 0 to " +
               std::to_string(whole - 1) + "), with the " + count(n - whole, "tail element") +
               " added after it: the tail loop runs after the final step. Add the tail's "
               "terms to the sum first, and take the final step once, of the whole sum.";
    return "";
  };

  // A mistake's result matches when got is within the bound's window of it.
  if (mistakes) {
    // Matches, nearest first: at a large n the window is wide (its bound grows with n), and a
    // mistake that gives about the same sum (half the lanes, half the terms) may fall within it
    // as well as the one the result equals.
    std::vector<std::pair<double, const Mistake*>> matched;
    const std::vector<Mistake> list = mistakes();
    for (const Mistake& m : list) {
      const double a = m.answer(0);
      // The window: the answer's, or the wrong result's own rounding when it is larger (a sum
      // with a term counted 16 times rounds with that larger sum; a formula whose sums cancel
      // rounds at the scale it gives).
      const double gamma = gamma_float(double(n + oracle.extra_roundings));
      const double window = std::max(
          {hi - lo, gamma * std::fabs(a), m.scale ? 2 * gamma * std::fabs(m.scale(0)) : 0.0});
      const auto same_as = [&](double x) {
        return std::isfinite(a) ? std::fabs(x - a) <= window
                                : (std::isnan(a) ? std::isnan(x) : x == a);
      };
      // A mistake with an error model, m.scale, is the right answer by construction: it is told
      // by the size of its error, and its window bounds that error, so a failing case whose error
      // is beyond the window rules it out (the expanded square's cancellation is mild on vectors
      // far apart: a kernel wrong there too is wrong in another way).
      if (m.scale ? !same_as(got)
                  : gives_the_right_answer(m, 1, [want](std::size_t) { return want; }))
        r.ruled_out.push_back(m.name());
      if (same_as(got))
        matched.push_back({std::isfinite(a) ? std::fabs(got - a) / window : 0.0, &m});
    }
    std::stable_sort(matched.begin(), matched.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [distance, m] : matched)
      r.add_match(*m, "your result matches " + m->what + ": " + m->advice);
  }
  // A sum that does not start at 0 shows where there is nothing to add, or where what it started
  // from dwarfs every term.
  const bool from_garbage =
      std::isfinite(got) && std::isfinite(want) &&
      std::fabs(got - want) > 1e3 * (std::fabs(oracle.finish(sums.magnitude)) + 1);
  if (!r.diagnosis.empty()) {
  } else if (oracle.changes_between_calls) {
    r.diagnosis_key = "a result that changes between calls";
    r.diagnosis =
        "two calls on the same inputs returned different results: your result depends on "
        "something besides the inputs. Most often an accumulator left uninitialised (or zeroed "
        "through a copy: `for (auto acc : accumulators) acc = 0;` zeroes copies), or a value "
        "kept from an earlier call (a static): set each accumulator itself to 0 before the "
        "loop.";
  } else if (oracle.read_past_the_end) {
    r.diagnosis_key = "a read past the end";
    r.diagnosis =
        "the test changed only the element right after the last one of each input (NaN, then "
        "0), and your result changed with it: your loop read past the end of the input. Check "
        "each loop's bound: i < n, not i <= n; a whole batch loaded only where Batch::size "
        "elements are left (i + Batch::size <= n); the tail from where the batches stopped, "
        "to n.";
  } else if ((n == 0 && got != want) || from_garbage) {
    r.diagnosis_key = "a sum that does not start at 0";
    r.diagnosis =
        (n == 0 ? "returned " + fmt(got) +
                      " for n = 0, where there is no term to add: the sum does not start at 0. "
                      "Most often an accumulator is left uninitialised, or zeroed through a copy "
                      "(a loop such as `for (auto acc : accumulators) acc = 0;` zeroes copies): "
                      "set each accumulator itself to 0 before the loop."
                : "returned " + fmt(got) +
                      ", far beyond what every term together makes (sum|terms| = " +
                      fmt(sums.magnitude) +
                      "): the sum started from, or added, a value that is not a term. Either "
                      "an accumulator is left uninitialised (or zeroed through a copy: `for "
                      "(auto acc : accumulators) acc = 0;` zeroes copies), and then n = 0 fails "
                      "too; or a load reads past the end of the input (a loop that checks for "
                      "one batch left and loads several), and then only the sizes that leave "
                      "such a remainder fail: compare with the sizes that passed.");
  } else if (std::isnan(got) && std::isfinite(want)) {
    r.specificity = Specificity::observed;
    r.diagnosis =
        "returned NaN for finite inputs: an uninitialised accumulator, or a read past "
        "the end of the input.";
  } else if (std::isinf(got) && std::isfinite(want) && std::isfinite(sums.magnitude)) {
    r.specificity = Specificity::observed;
    r.diagnosis =
        "returned " + fmt(got) +
        " where every term, and their sum, is finite (sum|terms| = " + fmt(sums.magnitude) +
        "): a value computed on the way passed float's largest, 3.4e38 (a square or a product "
        "of large values, or the same terms added again and again).";
  } else if (got == 0 && want != 0) {
    r.specificity = Specificity::observed;
    r.diagnosis =
        "returned 0: the sum never reached the result (an accumulator never added, "
        "or returned before the loop).";
  } else if (n > 0 && oracle.finish(s) != s &&
             std::fabs(got - s) <= slack + gamma_float(1) * std::fabs(s)) {
    r.diagnosis_key = "the sum without its final step";
    r.diagnosis =
        "returned the sum itself, without its final step (for a distance: the square "
        "root).";
  } else if (const std::string early = finished_before_the_tail(); !early.empty()) {
    r.diagnosis_key = "the final step before the tail";
    r.diagnosis = early;
  } else if (near(2 * s)) {
    r.diagnosis_key = "every element counted twice";
    r.diagnosis =
        "returned twice the answer: the elements were counted twice (the tail loop "
        "starts at 0, or accumulators were added together twice).";
  }
  // Partial reductions of the SIMD lanes or of several accumulators (skipped for huge n: it costs
  // a pass over the input per pattern). Before the elements left out: with n = one batch, lane 0
  // alone is also "the last n - 1 left out", and the lanes are what the student wrote.
  if (r.diagnosis.empty() && where.model == Model::simd && n <= (std::size_t{1} << 22)) {
    for (std::size_t w : {std::size_t{4}, std::size_t{8}, std::size_t{16}}) {
      if (!r.diagnosis.empty() || n < w) break;
      if (near(partial([&](std::size_t i) { return i % w == 0; })) ||
          near(partial([&](std::size_t i) { return i % w == 0 || i >= n / w * w; }))) {
        r.diagnosis_key = "one lane of " + std::to_string(w);
        r.diagnosis = "only one lane of each " + std::to_string(w) +
                      "-wide batch reached the "
                      "result: add up all the lanes of the accumulator at the end (xsimd::hadd).";
      }
      for (std::size_t k : {std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
        if (!r.diagnosis.empty() || n < w * k) break;
        const std::size_t blocked = n / (w * k) * (w * k);
        auto first_acc = [&](std::size_t i) { return i < blocked && (i / w) % k == 0; };
        if (near(partial(first_acc)) ||
            near(partial([&](std::size_t i) { return first_acc(i) || i >= blocked; }))) {
          r.diagnosis_key = "the first accumulator of " + std::to_string(k) + " alone";
          r.diagnosis = "only the first of your " + std::to_string(k) +
                        " accumulators reached "
                        "the result (with batches of " +
                        std::to_string(w) +
                        "): add them all "
                        "together before the final reduction.";
        }
      }
    }
  }
  // The accumulators combined with the wrong weights: each batch j, j + k, ... of an unrolled
  // loop over k accumulators (batches of this build's Batch::size) reaches the result c_j times,
  // 0 (left out: acc3 forgotten, a pairwise tree that stops before width 1) or 2 (added twice: a
  // tree that pairs acc[j] with acc[j + 1]). Fitted by trying the weights that one or two slips
  // make: at most two weights other than 1, at most one of them 2 (every other combination would
  // fit some small case by chance); the batches after the unrolled loop and the tail added once.
  // Every fit is recorded, nearest first: at some sizes several fit (acc 1 of 2 is acc 1 and 3 of
  // 4 wherever n mod 64 < 32), and Cases keeps the one that fits the most failing sizes.
  if (r.diagnosis.empty() && where.model == Model::simd && n <= (std::size_t{1} << 22)) {
    struct Fit {
      double distance;
      std::size_t k;
      std::vector<int> c;
    };
    std::vector<Fit> fits;
    for (std::size_t k : {std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
      if (n < lanes * k) break;
      const std::size_t blocked = n / (lanes * k) * (lanes * k);
      std::vector<AccurateSum> per_acc(k);
      AccurateSum rest;
      for (std::size_t i = 0; i < n; ++i)
        (i < blocked ? per_acc[(i / lanes) % k] : rest).add(oracle.term(i));
      // Odometer over {1, 0, 2} per accumulator.
      const int weight_of[3] = {1, 0, 2};
      std::vector<int> digit(k, 0), c(k);
      do {
        for (std::size_t j = 0; j < k; ++j) c[j] = weight_of[digit[j]];
        const auto ones = std::count(c.begin(), c.end(), 1),
                   twos = std::count(c.begin(), c.end(), 2);
        if (ones < static_cast<long>(k) && ones + 2 >= static_cast<long>(k) && twos <= 1) {
          double sum = rest.value();
          for (std::size_t j = 0; j < k; ++j) sum += c[j] * per_acc[j].value();
          if (near(sum)) fits.push_back({std::fabs(got - sum), k, c});
        }
        std::size_t j = 0;
        while (j < k && ++digit[j] == 3) digit[j++] = 0;
        if (j == k) break;
      } while (true);
    }
    std::stable_sort(fits.begin(), fits.end(),
                     [](const Fit& x, const Fit& y) { return x.distance < y.distance; });
    for (const Fit& fit : fits) {
      const std::size_t k = fit.k, w = lanes;
      std::vector<std::size_t> lost, twice;
      for (std::size_t j = 0; j < k; ++j) {
        if (fit.c[j] == 0) lost.push_back(j);
        if (fit.c[j] == 2) twice.push_back(j);
      }
      const auto names = [](const std::vector<std::size_t>& v, auto name) {
        std::string t;
        for (std::size_t q = 0; q < v.size(); ++q)
          t += (q == 0 ? "" : q + 1 == v.size() ? " and " : ", ") + name(v[q]);
        return t;
      };
      const auto number = [](std::size_t j) { return std::to_string(j); };
      const auto elements = [&](const std::vector<std::size_t>& v) {
        return names(v,
                     [w](std::size_t j) {
                       return std::to_string(j * w) + " to " + std::to_string(j * w + w - 1);
                     }) +
               " of every " + std::to_string(k * w);
      };
      const auto which = [&](const std::vector<std::size_t>& v) {
        return std::string(v.size() == 1 ? "accumulator " : "accumulators ") + names(v, number);
      };
      const std::string yours =
          " of your " + std::to_string(k) + " (batches of " + std::to_string(w) + ": elements ";
      std::string text;
      if (!lost.empty()) text = which(lost) + yours + elements(lost) + ") never reached the result";
      if (!twice.empty())
        text += (text.empty() ? which(twice) + yours + elements(twice) + ")"
                              : ", and " + which(twice)) +
                (twice.size() == 1 ? " was" : " were") + " added in twice";
      text += ": add every accumulator to the total exactly once.";
      if (!twice.empty() || lost.size() > 1)
        text +=
            " If you add them pairwise (a tree), check its pairs and its last level: for "
            "width = " +
            std::to_string(k / 2) +
            ", then half of it, down to 1, acc[j] += acc[j + width] for j < width.";
      // The key names the weights without digits, so that every size's fit of them agrees.
      std::string key = "accumulator weights ";
      for (const int x : fit.c) key += "oiz"[x];
      if (r.diagnosis.empty()) {
        r.diagnosis_key = key;
        r.diagnosis = text;
      } else {
        r.other_matches.push_back({"", key, text, false});
      }
    }
  }
  // A sum kept in an int (`int sum = 0`, or std::accumulate / std::inner_product given the int 0
  // as their start: each step converts back to int, toward zero): over every term, or over the
  // scalar tail's after the whole batches. Only where the truncation changes something: a tail
  // that truncates to 0 reads as a tail left out, below.
  if (r.diagnosis.empty()) {
    auto through_int = [&](std::size_t from) {
      double v = 0;
      for (std::size_t i = from; i < n; ++i) v = std::trunc(v + oracle.term(i));
      return v;
    };
    const std::size_t tail = n % lanes, body_end = n - tail;
    const double whole = through_int(0);
    const double tail_sum = partial([&](std::size_t i) { return i >= body_end; });
    const double tail_int = tail > 0 ? through_int(body_end) : 0.0;
    const std::string int_start =
        " (an int accumulator, or std::accumulate or std::inner_product started from the int 0 "
        "rather than 0.0f: each step converts the sum back to an int, toward zero). Sum in float.";
    if (!near(s) && whole != s && near(whole)) {
      r.diagnosis_key = "the sum kept in an int";
      r.diagnosis =
          "your result is the sum kept in an int, truncated toward zero at every step" + int_start;
    } else if (where.model == Model::simd && tail > 0 && tail_int != 0 && tail_int != tail_sum &&
               near(s - tail_sum + tail_int)) {
      r.diagnosis_key = "the tail's sum kept in an int";
      r.diagnosis = "the last " + count(tail, "element") + " (the tail after the whole batches, " +
                    batches_of(n, lanes) +
                    ") were summed in an int, truncated toward zero at "
                    "every step: their sum, " +
                    fmt(tail_sum) + ", came in as " + fmt(tail_int) + int_start;
    }
  }
  // Elements left out at the end or the start.
  AccurateSum dropped;
  for (std::size_t k = 1; r.diagnosis.empty() && k <= std::min<std::size_t>(n, 64); ++k) {
    dropped.add(oracle.term(n - k));
    if (near(s - dropped.value())) {
      r.diagnosis_key = "the last elements left out";
      r.diagnosis =
          "the last " + count(k, "element") + " were left out of the sum: " +
          (where.model == Model::simd
               ? "your tail loop is missing or stops early (" + batches_of(n, lanes) + ")."
               : std::string("the last part of the input is never added (n = ") +
                     std::to_string(n) + ": check how the work is split).");
    }
  }
  AccurateSum skipped;
  for (std::size_t k = 1; r.diagnosis.empty() && k <= std::min<std::size_t>(n, 64); ++k) {
    skipped.add(oracle.term(k - 1));
    if (near(s - skipped.value())) {
      r.diagnosis_key = "the first elements left out";
      r.diagnosis = "the first " + count(k, "element") +
                    " were left out of the sum: check where "
                    "your loop starts.";
    }
  }
  if (r.diagnosis.empty()) {
    r.specificity = Specificity::observed;
    r.diagnosis =
        "no simple pattern (none of the usual mistakes tried: a tail, a lane or a batch left "
        "out or added again): check the indices each batch reads, and the arithmetic of one "
        "batch against the scalar formula.";
  }
  return r;
}

void CheckResult::add_match(const Mistake& m, std::string text) {
  if (!mistake.empty()) {
    other_matches.push_back({m.what, m.name(), std::move(text), m.broad});
    return;
  }
  mistake = m.what;
  diagnosis_key = m.name();
  broad = m.broad;
  diagnosis = std::move(text);
  specificity = Specificity::mistake;
}

CheckResult check_unchanged(std::span<const float> before, std::span<const float> after,
                            const Where& where, const std::string& name) {
  CheckResult r;
  r.edit = where_line(where);
  r.checked = before.size();
  if (before.size() != after.size())
    throw std::invalid_argument("check_unchanged: the two copies of " + name + " differ in size");
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(before[i]) == std::bit_cast<std::uint32_t>(after[i])) continue;
    if (r.wrong++ == 0) r.first_wrong = i;
  }
  if (r.wrong == 0) return r;
  r.ok = false;
  r.specificity = Specificity::pattern;
  r.summary = where.function + ": changed its input " + name;
  r.diagnosis = count(r.wrong, "element") + " of the input " + name +
                " changed (the first at index " + std::to_string(r.first_wrong) + ", from " +
                fmt(before[r.first_wrong]) + " to " + fmt(after[r.first_wrong]) +
                "). An input is read-only: write only to the output.";
  return r;
}

}  // namespace workbook
