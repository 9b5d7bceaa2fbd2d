// The checker: tolerances, metrics, and each diagnosis on an output damaged the way a student's
// kernel would damage it.
#include <workbook/check.hpp>
#include <workbook/testing.hpp>

#include <gmock/gmock.h>

#include <cmath>
#include <limits>
#include <string>

#include <xsimd/xsimd.hpp>

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using workbook::CheckResult;
using workbook::GuardedBuffer;

const workbook::Where kWhere{"kernel", "labs/00_example/kernel.cpp"};

double answer(std::size_t i) {
  return 0.5 + static_cast<double>(i % 17) - 3.25;
}

// A buffer of n elements holding the exact answer, for a test to damage.
GuardedBuffer<float> correct_output(std::size_t n) {
  GuardedBuffer<float> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(answer(i));
  return y;
}

CheckResult check(const GuardedBuffer<float>& y,
                  workbook::Tolerance tolerance = workbook::Tolerance::exact(),
                  workbook::Shape shape = {}) {
  return workbook::check_elementwise(y, answer,
                                     {.where = kWhere, .tolerance = tolerance, .shape = shape});
}

TEST(Check, PassesAnExactOutputAndReportsNoError) {
  const auto y = correct_output(67);
  const CheckResult r = check(y);
  EXPECT_TRUE(r.ok) << r;
  EXPECT_EQ(r.checked, 67u);
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_EQ(r.max_abs_error, 0.0);
}

TEST(Check, EveryFailureNamesTheFileToEdit) {
  auto y = correct_output(10);
  y[3] = 100;
  const CheckResult r = check(y);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.report(), HasSubstr("edit labs/00_example/kernel.cpp: kernel"));
  EXPECT_THAT(r.report(), HasSubstr("Tolerance: exact"));
  EXPECT_EQ(r.first_wrong, 3u);
}

TEST(Check, DiagnosesTailNeverWritten) {
  auto y = correct_output(67);
  for (std::size_t i = 64; i < 67; ++i) y[i] = workbook::Poison<float>::value();
  const CheckResult r = check(y);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("the last 3 elements were never written"));
  EXPECT_THAT(r.diagnosis, HasSubstr("tail loop"));
  EXPECT_EQ(r.wrong, 3u);
}

TEST(Check, DiagnosesHeadNeverWritten) {
  auto y = correct_output(40);
  for (std::size_t i = 0; i < 5; ++i) y[i] = workbook::Poison<float>::value();
  EXPECT_THAT(check(y).diagnosis, HasSubstr("the first 5 elements were never written"));
}

TEST(Check, EveryWholeBatchHoldingThePoisonIsNotBlamedOnAPeel) {
  // A SIMD loop that loads its output: ReLU of the poison is the poison, so every whole batch reads
  // as never written, and the tail done one by one is right. A peel leaves less than one batch.
  const std::size_t w = workbook::simd_lanes<float>(), n = 4 * w + 3;
  auto y = correct_output(n);
  for (std::size_t i = 0; i < 4 * w; ++i) y[i] = workbook::Poison<float>::value();
  const std::string diagnosis = check(y).diagnosis;
  EXPECT_THAT(diagnosis, HasSubstr("(every whole batch of " + std::to_string(w) + "; the last 3"));
  EXPECT_THAT(diagnosis, HasSubstr("stored what it loaded from the output instead of the input"));
  EXPECT_THAT(diagnosis, Not(HasSubstr("peel")));
}

TEST(Check, DiagnosesOutputNeverWritten) {
  GuardedBuffer<float> y(20);
  EXPECT_THAT(check(y).diagnosis, HasSubstr("the output was never written"));
}

TEST(Check, DiagnosesAllZeros) {
  GuardedBuffer<float> y(20);
  for (std::size_t i = 0; i < 20; ++i) y[i] = 0;
  EXPECT_THAT(check(y).diagnosis, HasSubstr("all zeros"));
}

TEST(Check, DiagnosesConstantOffsetAndScale) {
  auto y = correct_output(50);
  for (std::size_t i = 0; i < 50; ++i) y[i] += 0.5f;
  EXPECT_THAT(check(y).diagnosis, HasSubstr("off by the same constant, 0.5"));
  for (std::size_t i = 0; i < 50; ++i) y[i] = static_cast<float>(3 * answer(i));
  EXPECT_THAT(check(y).diagnosis, HasSubstr("scaled by the same factor, 3"));
  for (std::size_t i = 0; i < 50; ++i) y[i] = static_cast<float>(2 * answer(i));
  EXPECT_THAT(check(y).diagnosis, HasSubstr("every element is exactly twice its answer"));
  EXPECT_THAT(check(y).diagnosis, HasSubstr("acc += acc"));
  for (std::size_t i = 0; i < 50; ++i) y[i] = static_cast<float>(-answer(i));
  EXPECT_THAT(check(y).diagnosis, HasSubstr("wrong sign"));
}

TEST(Check, MostElementsDoubledAndTheLastColumnsWrongAnotherWayIsTheMainPathDoubling) {
  // A matmul whose full tiles add each sum to itself, and whose narrow last tile (4 of 20
  // columns) errs another way.
  const workbook::Shape shape{.rows = 8, .cols = 20, .ld = 20};
  auto y = correct_output(160);
  for (std::size_t i = 0; i < 160; ++i)
    y[i] = static_cast<float>(i % 20 < 16 ? 2 * answer(i) : answer(i) + 1);
  const std::string diagnosis = check(y, workbook::Tolerance::exact(), shape).diagnosis;
  EXPECT_THAT(diagnosis, HasSubstr("128 of 160 elements are exactly twice their answer"));
  EXPECT_THAT(diagnosis, HasSubstr("all but the last 4 columns of each row"));
  // Half of them doubled is no pattern of one path.
  for (std::size_t i = 0; i < 160; ++i)
    y[i] = static_cast<float>(i % 20 < 10 ? 2 * answer(i) : answer(i) + 1);
  EXPECT_THAT(check(y, workbook::Tolerance::exact(), shape).diagnosis, Not(HasSubstr("twice")));
}

TEST(Check, TheFirstBlockOfRowsRightAndEveryLaterRowWrongIsWhereLaterBlocksStart) {
  // A matmul whose later tiles of rows read the wrong packed panel of A: rows 0 to 5 right.
  const workbook::Shape shape{.rows = 20, .cols = 9, .ld = 9};
  auto y = correct_output(180);
  for (std::size_t i = 6 * 9; i < 180; ++i) y[i] = static_cast<float>(answer(i) * 0.5 + 7);
  const std::string diagnosis = check(y, workbook::Tolerance::exact(), shape).diagnosis;
  EXPECT_THAT(diagnosis, HasSubstr("rows 0 to 5 (the first 6) are right, and every row from 6 on "
                                   "is wrong"));
  EXPECT_THAT(diagnosis, Not(HasSubstr("row 0 is right")));
  // One wrong row after them is a remainder, not a later block.
  auto last_row = correct_output(180);
  for (std::size_t i = 19 * 9; i < 180; ++i) last_row[i] += 3;
  EXPECT_THAT(check(last_row, workbook::Tolerance::exact(), shape).diagnosis,
              Not(HasSubstr("the first block of rows")));
}

TEST(Check, SomeElementsDoubledAreNamedWithTheColumnsTheyLieIn) {
  // A blocked loop over columns whose batch loop runs to n: the next block's first columns are
  // added in twice.
  const workbook::Shape shape{.rows = 6, .cols = 40, .ld = 40};
  auto y = correct_output(240);
  for (std::size_t i = 0; i < 240; ++i)
    if (i % 40 >= 16 && i % 40 < 24) y[i] = static_cast<float>(2 * answer(i));
  const std::string diagnosis = check(y, workbook::Tolerance::exact(), shape).diagnosis;
  EXPECT_THAT(diagnosis, HasSubstr("48 elements, in rows 0 to 5 and columns 16 to 23 that are "
                                   "wrong each hold exactly twice their answer"));
  EXPECT_THAT(diagnosis, HasSubstr("runs on past the block's end"));
  // The bottom-right corner alone: two leftover passes that both cover it.
  auto corner = correct_output(240);
  for (std::size_t i = 0; i < 240; ++i)
    if (i / 40 >= 4 && i % 40 >= 32) corner[i] = static_cast<float>(2 * answer(i));
  EXPECT_THAT(check(corner, workbook::Tolerance::exact(), shape).diagnosis,
              HasSubstr("They are the bottom-right corner"));
}

TEST(Check, ElementsLeftUnwrittenWhereTheInputIsPositiveAreOneBranch) {
  // relu's tail `y[i] = x[i] <= 0 ? 0 : y[i]`: the positive elements of the tail keep the output's
  // old contents (the poison), the others are right.
  const std::size_t n = 16 * 4 + 11;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = (i * 7) % 5 < 2 ? -1.5f : 2.0f + float(i);
  GuardedBuffer<float> y(n);
  for (std::size_t i = 0; i < n; ++i)
    if (i < 64 || x[i] <= 0) y[i] = x[i] > 0 ? x[i] : 0.0f;
  const auto relu = [&](std::size_t i) { return x[i] > 0 ? double(x[i]) : 0.0; };
  const workbook::ElementwiseCheck how{.where = kWhere,
                                       .tolerance = workbook::Tolerance::exact(),
                                       .inputs = {workbook::column("x", x)},
                                       .lanes = 16};
  const CheckResult r = workbook::check_elementwise(y, relu, how);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("are exactly those of the tail (the last 11"));
  EXPECT_THAT(r.diagnosis, HasSubstr("where x > 0"));
  EXPECT_THAT(r.diagnosis, HasSubstr("reads the output's own element where x[i] is meant"));
  EXPECT_THAT(r.diagnosis, Not(HasSubstr("stops early")));
  // A tail that stops early leaves a suffix, whatever the signs: no branch is named.
  GuardedBuffer<float> short_tail(n);
  for (std::size_t i = 0; i < n - 3; ++i) short_tail[i] = static_cast<float>(relu(i));
  EXPECT_THAT(workbook::check_elementwise(short_tail, relu, how).diagnosis,
              HasSubstr("the last 3 elements were never written: your tail loop"));
}

TEST(Check, DiagnosesShiftByOne) {
  GuardedBuffer<float> y(50);
  for (std::size_t i = 0; i < 50; ++i) y[i] = static_cast<float>(answer(i + 1));
  EXPECT_THAT(check(y).diagnosis, HasSubstr("shifted by one element"));
}

TEST(Check, DiagnosesNaNSwallowedAndInvented) {
  const std::vector<double> want = {1, std::nan(""), 2, std::nan(""), 3};
  GuardedBuffer<float> y(5);
  for (std::size_t i = 0; i < 5; ++i)
    y[i] = std::isnan(want[i]) ? 0.0f : static_cast<float>(want[i]);
  auto oracle = [&](std::size_t i) { return want[i]; };
  const workbook::ElementwiseCheck how{.where = kWhere, .tolerance = workbook::Tolerance::exact()};
  EXPECT_THAT(workbook::check_elementwise(y, oracle, how).diagnosis,
              HasSubstr("NaN inputs must give NaN"));
  for (std::size_t i = 0; i < 5; ++i)
    y[i] = std::isnan(want[i]) ? NAN : static_cast<float>(want[i]);
  EXPECT_TRUE(workbook::check_elementwise(y, oracle, how).ok)
      << "NaN where NaN is expected matches";
  y[0] = NAN;
  EXPECT_THAT(workbook::check_elementwise(y, oracle, how).diagnosis,
              HasSubstr("produced NaN where the answer is a number"));
}

TEST(Check, DiagnosesTailComputedWrongly) {
  auto y = correct_output(67);
  const std::size_t lanes = xsimd::batch<float>::size;
  const std::size_t tail = 67 % lanes;
  for (std::size_t i = 67 - tail; i < 67; ++i) y[i] += 1.0f;
  EXPECT_THAT(check(y).diagnosis, HasSubstr("check your scalar tail loop"));
}

TEST(Check, DiagnosesOneWrongLane) {
  auto y = correct_output(64);
  for (std::size_t i = 5; i < 64; i += 8) y[i] += 1.0f;
  EXPECT_THAT(check(y).diagnosis, HasSubstr("only lane 5 of each 8-wide batch"));
}

TEST(Check, DiagnosesWritesPastTheEndAndBeforeTheStart) {
  auto y = correct_output(30);
  y.data()[30] = 1.0f;
  y.data()[32] = 1.0f;
  const CheckResult after = check(y);
  EXPECT_FALSE(after.ok);
  EXPECT_THAT(after.diagnosis, HasSubstr("wrote past the end of the output: 2 elements"));
  auto z = correct_output(30);
  z.data()[-1] = 1.0f;
  EXPECT_THAT(check(z).diagnosis, HasSubstr("wrote before the first element"));
}

TEST(Check, DiagnosesTransposedMatrix) {
  const std::size_t n = 6;
  GuardedBuffer<float> c(n * n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t k = 0; k < n; ++k)
      c[r * n + k] = static_cast<float>(answer(k * n + r) + 0.01 * double(r));
  auto want = [](std::size_t i) { return answer(i) + 0.01 * double(i % 6); };
  const CheckResult r = workbook::check_elementwise(
      c, want,
      {.where = kWhere, .tolerance = workbook::Tolerance::roundings(1), .shape = {n, n, n}});
  EXPECT_THAT(r.diagnosis, HasSubstr("transposed"));
}

TEST(Check, DiagnosesRightAnswersInTheWrongPlaces) {
  // Every answer distinct, so that each wrong element's value says where it belongs.
  const auto unique = [](std::size_t i) { return 3.0 * static_cast<double>(i) + 1; };
  const std::size_t rows = 6, cols = 24;
  const auto diagnosis = [&](const GuardedBuffer<float>& c) {
    return workbook::check_elementwise(c, unique,
                                       {.where = kWhere,
                                        .tolerance = workbook::Tolerance::exact(),
                                        .shape = {rows, cols, cols}})
        .diagnosis;
  };
  // Columns from 8 on hold the answer 8 columns further on (a block's start added twice), where
  // there is one; the rest of each row was never written.
  GuardedBuffer<float> offset(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < cols; ++k)
      if (k < 8 || k + 8 < cols)
        offset[r * cols + k] = static_cast<float>(unique(r * cols + (k < 8 ? k : k + 8)));
  EXPECT_THAT(diagnosis(offset), HasSubstr("C[i][j] holds the answer for C[i][j + 8]"));
  // Tiles of 3 rows whose rows were stored 20 apart, not 24: row t of each tile lands 4 t early.
  GuardedBuffer<float> stride(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < cols; ++k)
      stride[(r - r % 3) * cols + (r % 3) * 20 + k] = static_cast<float>(unique(r * cols + k));
  EXPECT_THAT(diagnosis(stride), HasSubstr("row t of each block of 3 rows holds right answers "
                                           "from t * 4 elements further on"));
}

TEST(Check, DiagnosesRowAndColumnTailsNeverWritten) {
  const std::size_t rows = 7, cols = 9;
  GuardedBuffer<float> c(rows * cols);
  for (std::size_t r = 0; r < rows - 1; ++r)
    for (std::size_t k = 0; k < cols - 2; ++k)
      c[r * cols + k] = static_cast<float>(answer(r * cols + k));
  const CheckResult r = check(c, workbook::Tolerance::exact(), {rows, cols, cols});
  EXPECT_THAT(r.diagnosis, HasSubstr("the last 1 row and the last 2 columns were never written"));
  EXPECT_THAT(r.summary, HasSubstr("first at row 0, column 7"));
}

TEST(Check, DiagnosesWritesIntoRowPadding) {
  const std::size_t rows = 3, cols = 4, ld = 6;
  GuardedBuffer<float> c((rows - 1) * ld + cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < cols; ++k) c[r * ld + k] = static_cast<float>(answer(r * cols + k));
  EXPECT_TRUE(check(c, workbook::Tolerance::exact(), {rows, cols, ld}).ok);
  c[1 * ld + 4] = 0.0f;
  EXPECT_THAT(check(c, workbook::Tolerance::exact(), {rows, cols, ld}).diagnosis,
              HasSubstr("wrote into the padding between rows (row 1"));
}

TEST(Check, NamesARowLoopBoundedByTheLeadingDimension) {
  // Every row written out to ld: the padding between rows, and ld - cols past the last row.
  const std::size_t rows = 3, cols = 4, ld = 6;
  GuardedBuffer<float> c((rows - 1) * ld + cols);
  float* raw = c.data();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < ld; ++k) raw[r * ld + k] = 0.0f;
  const std::string diagnosis = check(c, workbook::Tolerance::exact(), {rows, cols, ld}).diagnosis;
  EXPECT_THAT(diagnosis,
              HasSubstr("wrote every row out to ld = 6: the padding between rows "
                        "(columns 4 to 5), and 2 elements past the end of the last row"));
  EXPECT_THAT(diagnosis, HasSubstr("runs to the leading dimension instead of the row's length"));
}

TEST(Check, RoundingToleranceIsGammaK) {
  // One rounding of 1.0 may move it by u (half an ULP above 1 is 2^-24): gamma_1 allows it.
  GuardedBuffer<float> y(1);
  auto one = [](std::size_t) { return 1.0 + 0x1p-24; };
  y[0] = 1.0f;
  EXPECT_TRUE(workbook::check_elementwise(
                  y, one, {.where = kWhere, .tolerance = workbook::Tolerance::roundings(1)})
                  .ok);
  y[0] = std::nextafter(1.0f, 0.0f);  // 1.5 u below the exact value: too far for one rounding
  EXPECT_FALSE(workbook::check_elementwise(
                   y, one, {.where = kWhere, .tolerance = workbook::Tolerance::roundings(1)})
                   .ok);
  EXPECT_TRUE(workbook::check_elementwise(
                  y, one, {.where = kWhere, .tolerance = workbook::Tolerance::roundings(2)})
                  .ok);
  EXPECT_DOUBLE_EQ(workbook::gamma_float(2), 2 * 0x1p-24 / (1 - 2 * 0x1p-24));
}

TEST(Check, OverflowToInfinityMatchesTheRoundedOracle) {
  GuardedBuffer<float> y(1);
  y[0] = std::numeric_limits<float>::infinity();
  auto huge = [](std::size_t) { return 6e38; };  // beyond FLT_MAX: float arithmetic gives +inf
  EXPECT_TRUE(workbook::check_elementwise(
                  y, huge, {.where = kWhere, .tolerance = workbook::Tolerance::roundings(1)})
                  .ok);
}

TEST(Check, MetricsMaxAbsRelativeAndUlps) {
  auto y = correct_output(4);  // 0.5 - 3.25 + i: -2.75, -1.75, -0.75, 0.25
  y[2] = std::nextafter(y[2], 0.0f);
  y[2] = std::nextafter(y[2], 0.0f);  // two ULPs off
  const CheckResult r = check(y, workbook::Tolerance::roundings(1));
  EXPECT_FALSE(r.ok);
  EXPECT_NEAR(r.max_ulps, 2.0, 1e-9);
  EXPECT_NEAR(r.max_abs_error, 2 * 0x1p-24, 1e-15);
  EXPECT_GT(r.rel_error, 0.0);
}

TEST(Check, IntegerOutputsAreExact) {
  GuardedBuffer<std::int32_t> c(10);
  for (int i = 0; i < 10; ++i) c[i] = i * 1000;
  auto want = [](std::size_t i) { return double(i) * 1000; };
  EXPECT_TRUE(workbook::check_elementwise(
                  c, want, {.where = kWhere, .tolerance = workbook::Tolerance::exact()})
                  .ok);
  c[7] += 1;
  const CheckResult r = workbook::check_elementwise(
      c, want, {.where = kWhere, .tolerance = workbook::Tolerance::exact()});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_wrong, 7u);
}

// --- Reductions ----------------------------------------------------------------------------------

double term(std::size_t i) {
  return 1.0 + 0.001 * static_cast<double>(i % 97);
}

CheckResult reduce_check(double got, std::size_t n) {
  return workbook::check_reduction(got, {.terms = n, .term = term}, kWhere);
}

double sum_if(std::size_t n, auto keep) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (keep(i)) s += term(i);
  return s;
}

TEST(CheckReduction, PassesWithinGammaNAndFailsBeyond) {
  const std::size_t n = 1000;
  const double exact = sum_if(n, [](std::size_t) { return true; });
  const double bound = workbook::gamma_float(n + 1) * exact;
  EXPECT_TRUE(reduce_check(exact + 0.9 * bound, n).ok);
  const CheckResult r = reduce_check(exact + 3 * bound, n);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.tolerance, HasSubstr("gamma_1001"));
}

// `int sum = 0`, or std::inner_product(..., 0): every step truncates toward zero.
double through_int(std::size_t from, std::size_t n) {
  double v = 0;
  for (std::size_t i = from; i < n; ++i) v = std::trunc(v + term(i));
  return v;
}

TEST(CheckReduction, DiagnosesASumKeptInAnInt) {
  const std::size_t n = 1000;
  EXPECT_THAT(reduce_check(through_int(0, n), n).diagnosis,
              HasSubstr("your result is the sum kept in an int, truncated toward zero"));
  // Only the scalar tail's sum through an int: the whole batches summed right.
  const std::size_t lanes = workbook::simd_lanes<float>(), m = 4 * lanes + 3;
  const double body = sum_if(m, [&](std::size_t i) { return i < 4 * lanes; });
  const CheckResult tail = reduce_check(body + through_int(4 * lanes, m), m);
  EXPECT_THAT(tail.diagnosis, HasSubstr("the last 3 elements (the tail after the whole batches"));
  EXPECT_THAT(tail.diagnosis, HasSubstr("were summed in an int"));
}

TEST(CheckReduction, DiagnosesTailLeftOut) {
  const std::size_t n = 67;
  const CheckResult r = reduce_check(sum_if(n, [](std::size_t i) { return i < 64; }), n);
  EXPECT_THAT(r.diagnosis, HasSubstr("the last 3 elements were left out"));
}

TEST(CheckReduction, DiagnosesHeadLeftOut) {
  const std::size_t n = 67;
  EXPECT_THAT(reduce_check(sum_if(n, [](std::size_t i) { return i >= 2; }), n).diagnosis,
              HasSubstr("the first 2 elements were left out"));
}

TEST(CheckReduction, DiagnosesOneLaneReduced) {
  const std::size_t n = 256;
  EXPECT_THAT(reduce_check(sum_if(n, [](std::size_t i) { return i % 8 == 0; }), n).diagnosis,
              HasSubstr("only one lane of each 8-wide batch"));
}

TEST(CheckReduction, DiagnosesOneAccumulatorOfSeveral) {
  const std::size_t n =
      1000;  // batches of 16, 4 accumulators: blocks of 64, 15 of them, then a tail
  const double got =
      sum_if(n, [](std::size_t i) { return (i < 960 && (i / 16) % 4 == 0) || i >= 960; });
  EXPECT_THAT(reduce_check(got, n).diagnosis, HasSubstr("only the first of your 4 accumulators"));
}

TEST(CheckReduction, FitsTheWeightsWithWhichTheAccumulatorsReachTheResult) {
  // Batches of this build's width W, 4 accumulators (blocks of 4 W, then batches left over and a
  // tail): a pairwise tree that pairs acc[k] with acc[k + 1] gives acc0 + 2 acc1 + acc2, acc3 lost.
  const std::size_t n = 1000, w = workbook::simd_lanes<float>(), blocked = n / (4 * w) * (4 * w);
  const auto weighted = [&](std::array<int, 4> c) {
    double got = 0;
    for (std::size_t i = 0; i < n; ++i) got += (i >= blocked ? 1 : c[(i / w) % 4]) * term(i);
    return got;
  };
  const CheckResult r = reduce_check(weighted({1, 2, 1, 0}), n);
  EXPECT_THAT(r.diagnosis,
              HasSubstr("accumulator 3 of your 4 (batches of " + std::to_string(w) + ": elements " +
                        std::to_string(3 * w) + " to " + std::to_string(4 * w - 1) + " of every " +
                        std::to_string(4 * w) +
                        ") never reached the result, and accumulator 1 was added in "
                        "twice"));
  EXPECT_THAT(r.diagnosis, HasSubstr("acc[j] += acc[j + width]"));
  // Two left out, as a tree that stops before width 1 leaves them.
  EXPECT_THAT(reduce_check(weighted({1, 0, 1, 0}), n).diagnosis,
              HasSubstr("accumulators 1 and 3 of your 4"));
}

TEST(CheckReduction, AMistakeThatAPassingCaseWouldHaveFailedIsRuledOut) {
  const std::size_t n = 100;
  const double right = sum_if(n, [](std::size_t) { return true; });
  const auto with = [&](double wrong) {
    return [=] {
      return std::vector<workbook::Mistake>{
          {"every other batch", "step by Batch::size", [=](std::size_t) { return wrong; }}};
    };
  };
  // Passing: a mistake whose result lies far outside the bound is ruled out; one equal to the
  // right answer is not (it fails nowhere here, and this case says nothing about it).
  EXPECT_THAT(workbook::check_reduction(right, {.terms = n, .term = term}, kWhere, with(right + 10))
                  .ruled_out,
              ElementsAre("every other batch"));
  EXPECT_TRUE(workbook::check_reduction(right, {.terms = n, .term = term}, kWhere, with(right))
                  .ruled_out.empty());
}

TEST(CheckReduction, DiagnosesZeroTwiceNaNAndMissingFinalStep) {
  const std::size_t n = 100;
  const double s = sum_if(n, [](std::size_t) { return true; });
  EXPECT_THAT(reduce_check(0.0, n).diagnosis, HasSubstr("returned 0"));
  EXPECT_THAT(reduce_check(2 * s, n).diagnosis, HasSubstr("twice the answer"));
  EXPECT_THAT(reduce_check(NAN, n).diagnosis, HasSubstr("returned NaN"));
  EXPECT_THAT(reduce_check(INFINITY, n).diagnosis,
              HasSubstr("where every term, and their sum, is finite"));
  const workbook::ReductionOracle root{
      .terms = n, .term = term, .finish = [](double v) { return std::sqrt(v); }};
  EXPECT_TRUE(workbook::check_reduction(std::sqrt(s), root, kWhere).ok);
  EXPECT_THAT(workbook::check_reduction(s, root, kWhere).diagnosis,
              HasSubstr("without its final step"));
}

TEST(CheckReduction, NamesTheFinalStepTakenBeforeTheTail) {
  // sqrt of the whole batches' sum, with the tail's terms added after it.
  const std::size_t lanes = xsimd::batch<float>::size, n = 4 * lanes + 3, whole = 4 * lanes;
  const workbook::ReductionOracle root{
      .terms = n, .term = term, .finish = [](double v) { return std::sqrt(v); }};
  const double early = std::sqrt(sum_if(n, [whole](std::size_t i) { return i < whole; })) +
                       sum_if(n, [whole](std::size_t i) { return i >= whole; });
  const std::string diagnosis = workbook::check_reduction(early, root, kWhere).diagnosis;
  EXPECT_THAT(diagnosis, HasSubstr("with the 3 tail elements added after it"));
  EXPECT_THAT(diagnosis, HasSubstr("take the final step once, of the whole sum"));
}

TEST(CheckReduction, NamesWhatTheTestSawOfSeveralCalls) {
  workbook::ReductionOracle oracle{.terms = 100, .term = term};
  EXPECT_THAT(workbook::check_reduction(NAN, oracle, kWhere).diagnosis,
              HasSubstr("an uninitialised accumulator, or a read past the end"));
  oracle.read_past_the_end = true;
  EXPECT_THAT(workbook::check_reduction(NAN, oracle, kWhere).diagnosis,
              HasSubstr("your loop read past the end of the input"));
  oracle.changes_between_calls = true;
  EXPECT_THAT(workbook::check_reduction(1e9, oracle, kWhere).diagnosis,
              HasSubstr("two calls on the same inputs returned different results"));
}

TEST(CheckReduction, NonFiniteAnswers) {
  const workbook::ReductionOracle with_inf{
      .terms = 3, .term = [](std::size_t i) { return i == 1 ? INFINITY : 1.0; }};
  EXPECT_TRUE(workbook::check_reduction(INFINITY, with_inf, kWhere).ok);
  EXPECT_FALSE(workbook::check_reduction(3.0, with_inf, kWhere).ok);
  const workbook::ReductionOracle with_nan{
      .terms = 3, .term = [](std::size_t i) { return i == 2 ? NAN : 1.0; }};
  EXPECT_TRUE(workbook::check_reduction(NAN, with_nan, kWhere).ok);
}

TEST(CheckUnchanged, ReportsTheFirstChangedElement) {
  const std::vector<float> before = {1, 2, 3, 4};
  std::vector<float> after = before;
  EXPECT_TRUE(workbook::check_unchanged(before, after, kWhere, "x").ok);
  after[2] = -3;
  const CheckResult r = workbook::check_unchanged(before, after, kWhere, "x");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("first at index 2, from 3 to -3"));
}

}  // namespace
