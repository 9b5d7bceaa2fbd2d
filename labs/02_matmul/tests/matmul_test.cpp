// Lab 02 visible tests: matmul against a float64 oracle on shapes that break blocked kernels (1,
// primes, sizes next to every usual block size, tall and skinny, k = 1, large k), with padding
// between rows, unaligned starts, stale contents in C, special values, and the argument checks.
// Each TEST below is its own ctest test: `ctest --preset lab02 -R Matmul.Prime` runs one.
#include "matmul.hpp"
#include "matmul_oracle.hpp"
#include "matmul_probe.hpp"

#include <workbook/testing.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using lab02::MatmulShape;
using lab02::oracle::describe;
using lab02::oracle::random_matrix;
using workbook::testing::Cases;

// What to do about elements of C that were added to (each one still poisoned after the call was).
// Where every row was written up to one column and added to from there on, whatever sets C up
// stops at that column; at a quarter of the row, it counted bytes, not floats.
std::string why_added(const workbook::GuardedBuffer<float>& c, const MatmulShape& s) {
  std::size_t width = 0;
  while (width < s.n && !c.is_poison(width)) ++width;
  bool from_a_column = width > 0 && width < s.n;
  for (std::size_t i = 0; i < s.m && from_a_column; ++i)
    for (std::size_t j = 0; j < s.n; ++j)
      from_a_column = from_a_column && c.is_poison(i * s.ldc + j) == (j >= width);
  const std::string written =
      "In every row " +
      (width == 1 ? std::string("column 0 was")
                  : "columns 0 to " + std::to_string(width - 1) + " were") +
      " written and every later one added to: whatever clears C (or writes its first sums) "
      "stops ";
  // (n bytes clear n / 4 floats and part of the next, which is then neither poison nor right.)
  const std::size_t quarter = s.n / sizeof(float);
  if (from_a_column && s.n >= 4 && (width == quarter || width == quarter + 1))
    return written + "after " + std::to_string(width) + " of the " + std::to_string(s.n) +
           " floats, a quarter, as " + std::to_string(s.n) +
           " bytes do. memset and memcpy count bytes: clear a row with std::memset(row, 0, n * "
           "sizeof(float)), or std::fill_n(row, n, 0.0f).";
  const std::string overwrite =
      "Each element of C must be overwritten by its first sum, whatever C held: in a blocked loop "
      "the choice between writing and adding depends on the block of k alone (the first block of "
      "k writes, the later ones add), not on a flag that another loop (of rows or of columns) "
      "sets or keeps.";
  return (from_a_column ? written + "at column " + std::to_string(width) + ". " : "") + overwrite;
}

// Draws A and B for the shape, multiplies, and checks C (and C's padding) against the oracle.
// `offset` starts A, B and C that many floats past a 64-byte boundary.
workbook::CheckResult multiply_and_check(const MatmulShape& s, workbook::Rng& rng,
                                         std::size_t offset = 0) {
  std::vector<float> a = random_matrix(s.m, s.k, s.lda, rng),
                     b = random_matrix(s.k, s.n, s.ldb, rng);
  a.insert(a.begin(), offset, 0.0f);
  b.insert(b.begin(), offset, 0.0f);
  const std::span<const float> as = std::span<const float>(a).subspan(offset);
  const std::span<const float> bs = std::span<const float>(b).subspan(offset);
  workbook::GuardedBuffer<float> c = lab02::oracle::output_for(s, offset);
  lab02::matmul(as, bs, c.span(), s);
  const lab02::oracle::Product want = lab02::oracle::multiply(as, bs, s);
  workbook::CheckResult r = lab02::oracle::check(want, c, s);
  // Elements that still hold the poison were never written, or were added to (C += ...): NaN plus
  // anything stays NaN. Run again on a C of zeros: those right then were added to.
  std::size_t poisoned = 0, added = 0;
  for (std::size_t i = 0; i < s.m && !r.ok; ++i)
    for (std::size_t j = 0; j < s.n; ++j) poisoned += c.is_poison(i * s.ldc + j);
  if (poisoned > 0) {
    workbook::GuardedBuffer<float> zeros = lab02::oracle::output_for(s, offset);
    for (std::size_t i = 0; i < s.m; ++i) std::fill_n(zeros.data() + i * s.ldc, s.n, 0.0f);
    lab02::matmul(as, bs, zeros.span(), s);
    const workbook::Tolerance tolerance = workbook::Tolerance::sum_of(s.k);
    for (std::size_t i = 0; i < s.m; ++i)
      for (std::size_t j = 0; j < s.n; ++j)
        if (c.is_poison(i * s.ldc + j)) {
          const double got = zeros[i * s.ldc + j], scale = want.scale[i * s.n + j];
          added +=
              std::fabs(got - want.value[i * s.n + j]) <= tolerance.rel * scale + tolerance.abs;
        }
  }
  if (poisoned > 0 && added == poisoned) {
    r.diagnosis = std::to_string(added) + (added == 1 ? " element" : " elements") +
                  " of C held the poison after the call, and the right answer when C held zeros "
                  "before it: your code adds to them (C += ...) instead of writing them. " +
                  why_added(c, s) + " (What the check saw: " + r.diagnosis + ")";
    r.specificity = workbook::Specificity::mistake;
    return r;
  }
  // No mistake of the catalogue matched: what two probes of this shape show of the indexing leads.
  if (!r.ok && r.specificity < workbook::Specificity::mistake) {
    const std::string reads = lab02::probe::what_matmul_reads(s);
    if (!reads.empty()) {
      r.diagnosis = reads + " (What the check saw on random inputs: " + r.diagnosis + ")";
      r.specificity = workbook::Specificity::pattern;
    }
  }
  return r;
}

// Every shape is checked, then the most telling failure is reported (workbook::testing::Cases):
// the smallest shapes look alike whatever the mistake.
void expect_all_correct(const std::vector<MatmulShape>& shapes) {
  auto rng = workbook::testing::rng();
  Cases cases(lab02::oracle::where(), "shape");
  for (const MatmulShape& s : shapes) {
    cases.next(describe(s));
    cases.check(multiply_and_check(s, rng));
  }
  EXPECT_ALL_CORRECT(cases);
}

MatmulShape packed(std::size_t m, std::size_t n, std::size_t k) {
  return MatmulShape::packed(m, n, k);
}

// --- Shapes --------------------------------------------------------------------------------------

TEST(Matmul, TinyShapes) {
  std::vector<MatmulShape> shapes;
  for (std::size_t m = 1; m <= 3; ++m)
    for (std::size_t n = 1; n <= 3; ++n)
      for (std::size_t k = 1; k <= 3; ++k) shapes.push_back(packed(m, n, k));
  expect_all_correct(shapes);
}

TEST(Matmul, PrimeShapes) {
  expect_all_correct(
      {packed(7, 13, 17), packed(31, 37, 41), packed(97, 101, 103), packed(131, 127, 137)});
}

// One below, at and one above the sizes blocks usually come in (a SIMD width of 4, 8 or 16;
// register tiles of 4, 6, 8, 12 or 14 rows; cache blocks of 64 to 512), so that every kind of
// leftover appears: a partial register tile, a partial cache block, both at once.
TEST(Matmul, SizesNextToEveryBlockSize) {
  expect_all_correct({packed(15, 17, 16), packed(17, 33, 65), packed(65, 15, 33),
                      packed(33, 63, 17), packed(95, 129, 257), packed(193, 97, 255),
                      packed(13, 31, 385), packed(50, 200, 129)});
}

// Past every cache block the reference uses (192 rows of A, 256 of B, 1024 columns): each loop
// over blocks runs more than once and ends on a partial block.
TEST(Matmul, CrossesEveryCacheBlock) {
  expect_all_correct({packed(389, 1031, 613)});
}

TEST(Matmul, TallAndSkinny) {
  expect_all_correct({packed(1000, 3, 5), packed(3, 1000, 7), packed(2000, 1, 1),
                      packed(1, 2000, 3), packed(1, 1, 4000), packed(513, 2, 130),
                      packed(2, 513, 130)});
}

// k = 1: every element of C is a single product (an outer product of a column and a row).
TEST(Matmul, KIsOne) {
  expect_all_correct({packed(64, 64, 1), packed(37, 129, 1), packed(1, 1, 1)});
}

// Long sums: many blocks of k are added into C, and the tolerance (gamma_k) grows with k.
TEST(Matmul, LargeK) {
  expect_all_correct({packed(4, 5, 20000), packed(17, 33, 5000), packed(6, 64, 1537)});
}

// --- Layout --------------------------------------------------------------------------------------

// Rows further apart than their length. The padding of A and B holds NaN (reading it spoils C) and
// the padding of C holds poison that must survive (writing it is caught).
TEST(Matmul, LeadingDimensionsLargerThanTheRows) {
  expect_all_correct({{.m = 5, .n = 7, .k = 3, .lda = 4, .ldb = 9, .ldc = 8},
                      {.m = 33, .n = 65, .k = 17, .lda = 20, .ldb = 80, .ldc = 67},
                      {.m = 64, .n = 64, .k = 64, .lda = 100, .ldb = 64, .ldc = 96},
                      {.m = 100, .n = 300, .k = 270, .lda = 300, .ldb = 301, .ldc = 512}});
}

TEST(Matmul, UnalignedStarts) {
  auto rng = workbook::testing::rng();
  Cases cases(lab02::oracle::where(), "offset");
  for (std::size_t offset : {1, 3, 7, 15}) {
    cases.next(describe(packed(37, 77, 53)) + "; A, B and C start " + std::to_string(offset) +
               " floats past a 64-byte boundary");
    cases.check(multiply_and_check(packed(37, 77, 53), rng, offset));
  }
  EXPECT_ALL_CORRECT(cases);
}

// --- Semantics -----------------------------------------------------------------------------------

// C is overwritten (beta = 0): whatever it held must not leak into the result.
TEST(Matmul, OverwritesStaleContentsOfC) {
  auto rng = workbook::testing::rng();
  Cases cases(lab02::oracle::where());
  for (const MatmulShape& s : {packed(50, 70, 90), packed(7, 300, 600)}) {
    const std::vector<float> a = random_matrix(s.m, s.k, s.lda, rng),
                             b = random_matrix(s.k, s.n, s.ldb, rng);
    const lab02::oracle::Product want = lab02::oracle::multiply(a, b, s);
    workbook::GuardedBuffer<float> c = lab02::oracle::output_for(s);
    lab02::oracle::fill_stale(c, s);
    // What C held before each call, so that a C added to (C += A * B) is recognised as such.
    std::vector<float> before(c.span().begin(), c.span().end());
    cases.next("C held " + std::to_string(static_cast<int>(lab02::oracle::kStale)) +
               " in every element before the call; matmul must overwrite C (as sgemm with beta = "
               "0), not add to it. With " +
               describe(s));
    lab02::matmul(a, b, c.span(), s);
    const bool first_right = cases.check(lab02::oracle::check(want, c, s, before));
    // Twice on the same C: the second call must not build on the first. (After a wrong first
    // call, a second that computes the same wrong C would "match C as it was": not compared.)
    before.assign(c.span().begin(), c.span().end());
    if (!first_right) before.clear();
    cases.next("after a second call on the same C, " + describe(s));
    lab02::matmul(a, b, c.span(), s);
    cases.check(lab02::oracle::check(want, c, s, before));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Matmul, KIsZeroGivesZeros) {
  const MatmulShape s = packed(5, 7, 0);
  workbook::GuardedBuffer<float> c = lab02::oracle::output_for(s);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = 42.0f;
  const std::vector<float> before(c.span().begin(), c.span().end());
  lab02::matmul({}, {}, c.span(), s);
  EXPECT_CORRECT(lab02::oracle::check(lab02::oracle::multiply({}, {}, s), c, s, before))
      << "with k = 0 each element of C is an empty sum: 0, whatever C held before";
}

TEST(Matmul, EmptyProductsWriteNothing) {
  for (const MatmulShape& s : {packed(0, 5, 3), packed(4, 0, 3), packed(0, 0, 0)}) {
    std::vector<float> a(s.m * s.k, 1.0f), b(s.k * s.n, 1.0f);
    workbook::GuardedBuffer<float> c(0);
    EXPECT_NO_THROW(lab02::matmul(a, b, c.span(), s)) << describe(s);
    EXPECT_TRUE(c.damage().intact()) << "wrote outside an empty C: " << describe(s);
  }
}

TEST(Matmul, MultipliesAMatrixByItself) {
  // A and B may be the same buffer: both are only read.
  auto rng = workbook::testing::rng();
  const MatmulShape s = packed(70, 70, 70);
  const std::vector<float> a = random_matrix(70, 70, 70, rng);
  workbook::GuardedBuffer<float> c = lab02::oracle::output_for(s);
  lab02::matmul(a, a, c.span(), s);
  EXPECT_CORRECT(lab02::oracle::check(lab02::oracle::multiply(a, a, s), c, s)) << "C = A * A";
}

TEST(Matmul, PropagatesNaNAndInfinity) {
  auto rng = workbook::testing::rng();
  const MatmulShape s = packed(20, 40, 30);
  std::vector<float> a = random_matrix(s.m, s.k, s.lda, rng),
                     b = random_matrix(s.k, s.n, s.ldb, rng);
  a[3 * s.lda + 29] = std::numeric_limits<float>::quiet_NaN();  // row 3 of C: NaN
  b[7 * s.ldb + 39] = std::numeric_limits<float>::infinity();  // column 39: +-inf (or NaN in row 3)
  workbook::GuardedBuffer<float> c = lab02::oracle::output_for(s);
  lab02::matmul(a, b, c.span(), s);
  EXPECT_CORRECT(lab02::oracle::check(lab02::oracle::multiply(a, b, s), c, s))
      << "a NaN in A must reach its whole row of C, an infinity in B its whole column (even from "
         "the last column and the last k)";
}

TEST(Matmul, LeavesInputsUnchanged) {
  auto rng = workbook::testing::rng();
  const MatmulShape s = packed(33, 45, 57);
  const std::vector<float> a = random_matrix(s.m, s.k, s.lda, rng),
                           b = random_matrix(s.k, s.n, s.ldb, rng);
  const std::vector<float> a_before = a, b_before = b;
  workbook::GuardedBuffer<float> c = lab02::oracle::output_for(s);
  lab02::matmul(a, b, c.span(), s);
  EXPECT_CORRECT(workbook::check_unchanged(a_before, a, lab02::oracle::where(), "A"));
  EXPECT_CORRECT(workbook::check_unchanged(b_before, b, lab02::oracle::where(), "B"));
}

// --- Argument checks -----------------------------------------------------------------------------

TEST(Matmul, RejectsCSharingMemoryWithAOrB) {
  // The product reads A and B while it writes C: in place is impossible, so any overlap is an
  // error.
  const MatmulShape s = packed(8, 8, 8);
  std::vector<float> storage(3 * 64, 1.0f);
  const std::span<float> all(storage);
  const std::span<const float> a = all.subspan(0, 64), b = all.subspan(64, 64);
  EXPECT_THROW(lab02::matmul(a, b, all.subspan(0, 64), s), std::invalid_argument) << "C is A";
  EXPECT_THROW(lab02::matmul(a, b, all.subspan(64, 64), s), std::invalid_argument) << "C is B";
  EXPECT_THROW(lab02::matmul(a, b, all.subspan(100, 64), s), std::invalid_argument)
      << "C overlaps the end of B";
  EXPECT_THROW(lab02::matmul(a, b, all.subspan(32, 64), s), std::invalid_argument)
      << "C overlaps A and B";
  EXPECT_NO_THROW(lab02::matmul(a, b, all.subspan(128, 64), s))
      << "C right after B, not overlapping";
}

TEST(Matmul, RejectsBadShapesBeforeWritingC) {
  // Every buffer has 100 elements; each shape below gets exactly one thing wrong.
  std::vector<float> a(100, 1.0f), b(100, 1.0f);
  workbook::GuardedBuffer<float> c(100);
  const std::vector<MatmulShape> bad = {
      {.m = 4, .n = 4, .k = 5, .lda = 4, .ldb = 4, .ldc = 4},       // lda < k
      {.m = 4, .n = 5, .k = 4, .lda = 4, .ldb = 4, .ldc = 5},       // ldb < n
      {.m = 4, .n = 5, .k = 4, .lda = 4, .ldb = 5, .ldc = 4},       // ldc < n
      {.m = 5, .n = 4, .k = 21, .lda = 21, .ldb = 4, .ldc = 4},     // A needs 105 elements
      {.m = 2, .n = 10, .k = 11, .lda = 11, .ldb = 10, .ldc = 10},  // B needs 110
      {.m = 11, .n = 10, .k = 2, .lda = 2, .ldb = 10, .ldc = 10},   // C needs 110
  };
  for (const MatmulShape& s : bad) {
    EXPECT_THROW(lab02::matmul(a, b, c.span(), s), std::invalid_argument) << describe(s);
    for (std::size_t i = 0; i < c.size(); ++i)
      ASSERT_TRUE(c.is_poison(i)) << "C[" << i
                                  << "] was written before the arguments were rejected: "
                                  << describe(s);
  }
}

}  // namespace
