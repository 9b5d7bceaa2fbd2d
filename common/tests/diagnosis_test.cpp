// The diagnoses beyond the generic patterns: a lab's catalogue of mistakes (named first when the
// output matches one), messages in the kernel's own model (SIMD, threads, CUDA), and a second run
// that calls an output changing between runs a race.
#include <workbook/check.hpp>
#include <workbook/testing.hpp>

#include <gmock/gmock.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using workbook::CheckResult;
using workbook::GuardedBuffer;
using workbook::Model;

double answer(std::size_t i) {
  return 0.25 + static_cast<double>(i % 13) - 4.0;
}

workbook::Where where(Model model) {
  return {"kernel", "labs/07_example/kernel.cpp", model};
}

// Two mistakes of a made-up lab: every element doubled, and the sign flipped.
workbook::Mistakes catalogue() {
  return [] {
    return std::vector<workbook::Mistake>{
        {"twice the answer", "the sum was added twice.",
         [](std::size_t i) { return 2 * answer(i); }},
        {"the negated answer", "the difference is taken the wrong way round.",
         [](std::size_t i) { return -answer(i); }},
    };
  };
}

CheckResult check(const GuardedBuffer<float>& y, Model model = Model::simd,
                  workbook::Mistakes mistakes = {}, std::function<void()> run_again = {},
                  workbook::Shape shape = {}) {
  return workbook::check_elementwise(y, answer,
                                     {.where = where(model),
                                      .tolerance = workbook::Tolerance::roundings(1),
                                      .shape = shape,
                                      .mistakes = std::move(mistakes),
                                      .run_again = std::move(run_again)});
}

GuardedBuffer<float> filled(std::size_t n, const std::function<double(std::size_t)>& f) {
  GuardedBuffer<float> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(f(i));
  return y;
}

TEST(Mistakes, TheMatchingOneIsNamedFirst) {
  const auto y = filled(100, [](std::size_t i) { return -answer(i); });
  const CheckResult r = check(y, Model::simd, catalogue());
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.mistake, "the negated answer");
  EXPECT_THAT(r.diagnosis, HasSubstr("your output matches the negated answer: the difference is "
                                     "taken the wrong way round."));
  // The generic pattern (every element has the wrong sign) is not what is said.
  EXPECT_THAT(r.diagnosis, Not(HasSubstr("wrong sign")));
}

TEST(Mistakes, OneWrongElementMatchesNone) {
  // Doubled everywhere but one element: not the mistake, which must hold for every element.
  auto y = filled(100, [](std::size_t i) { return 2 * answer(i); });
  y[57] = 1000;
  const CheckResult r = check(y, Model::simd, catalogue());
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.mistake, "");
  EXPECT_THAT(r.diagnosis, Not(HasSubstr("your output matches")));
}

TEST(Mistakes, AreBuiltOnlyWhenTheCheckFails) {
  int built = 0;
  const auto y = filled(50, answer);
  const CheckResult r = check(y, Model::simd, [&] {
    ++built;
    return catalogue()();
  });
  EXPECT_TRUE(r.ok) << r;
  EXPECT_EQ(built, 0);
}

TEST(Mistakes, NaNInTheAnswerStandsForUnwritten) {
  // A mistake that skips the second half: its answer is NaN there, where the output is poison.
  GuardedBuffer<float> y(64);
  for (std::size_t i = 0; i < 32; ++i) y[i] = static_cast<float>(answer(i));
  const workbook::Mistakes half = [] {
    return std::vector<workbook::Mistake>{
        {"only the first half", "the loop stops at n / 2.",
         [](std::size_t i) { return i < 32 ? answer(i) : std::nan(""); }}};
  };
  EXPECT_EQ(check(y, Model::simd, half).mistake, "only the first half");
}

TEST(Mistakes, AReductionMatchesItsWrongResult) {
  const std::size_t n = 1000;
  const workbook::ReductionOracle oracle{.terms = n,
                                         .term = [](std::size_t i) { return answer(i); }};
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += answer(i);
  const workbook::Mistakes squared = [&] {
    return std::vector<workbook::Mistake>{{"the sum of squares",
                                           "square nothing: a dot product multiplies a by b.",
                                           [&](std::size_t) {
                                             double s = 0;
                                             for (std::size_t i = 0; i < n; ++i)
                                               s += answer(i) * answer(i);
                                             return s;
                                           }}};
  };
  double squares = 0;
  for (std::size_t i = 0; i < n; ++i) squares += answer(i) * answer(i);
  const CheckResult wrong =
      workbook::check_reduction(float(squares), oracle, where(Model::simd), squared);
  EXPECT_EQ(wrong.mistake, "the sum of squares");
  EXPECT_THAT(wrong.diagnosis, HasSubstr("your result matches the sum of squares"));
  EXPECT_TRUE(workbook::check_reduction(float(sum), oracle, where(Model::simd), squared).ok);
}

TEST(Models, ACudaTailNamesTheGridNotSimd) {
  // 1000 elements, the last 232 unwritten: a grid of 1000 / 256 = 3 blocks of 256 threads.
  GuardedBuffer<float> y(1000);
  for (std::size_t i = 0; i < 768; ++i) y[i] = static_cast<float>(answer(i));
  const CheckResult r = check(y, Model::cuda);
  EXPECT_THAT(r.diagnosis,
              AllOf(HasSubstr("cover only the first 768"), HasSubstr("(n + threads - 1) / threads"),
                    Not(HasSubstr("SIMD")), Not(HasSubstr("batch")), Not(HasSubstr("tail loop"))));
}

TEST(Models, ACudaGridStrideHoleIsPeriodic) {
  // Every second group of 256 never written: a grid-stride loop stepping twice the grid.
  GuardedBuffer<float> y(4096);
  for (std::size_t i = 0; i < 4096; ++i)
    if ((i / 256) % 2 == 0) y[i] = static_cast<float>(answer(i));
  const CheckResult r = check(y, Model::cuda);
  EXPECT_THAT(r.diagnosis, AllOf(HasSubstr("the same positions in every group of 512"),
                                 HasSubstr("blockDim.x * gridDim.x"), Not(HasSubstr("SIMD"))));
}

TEST(Models, CudaRowsAndColumnsNameTheGridsExtents) {
  GuardedBuffer<float> y(6 * 7);
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t c = 0; c < 5; ++c) y[r * 7 + c] = static_cast<float>(answer(r * 7 + c));
  const CheckResult r = check(y, Model::cuda, {}, {}, {.rows = 6, .cols = 7});
  EXPECT_THAT(r.diagnosis, AllOf(HasSubstr("the last 2 rows and the last 2 columns"),
                                 HasSubstr("your grid stops short"), Not(HasSubstr("blocked"))));
}

TEST(Models, CudaValuesWithNoPatternPointToRacecheck) {
  auto y = filled(300, answer);
  for (std::size_t i : {3, 71, 150, 299}) y[i] += 7;
  const CheckResult r = check(y, Model::cuda);
  EXPECT_THAT(r.diagnosis, AllOf(HasSubstr("compute-sanitizer --tool racecheck"),
                                 HasSubstr("__syncthreads()"), Not(HasSubstr("SIMD"))));
}

TEST(Models, CudaPastTheEndNamesTheBoundsCheck) {
  auto y = filled(100, answer);
  y.data()[100] = 1;  // one thread past the end stored
  const CheckResult r = check(y, Model::cuda);
  EXPECT_THAT(r.diagnosis, AllOf(HasSubstr("wrote past the end"), HasSubstr("if (i < n)"),
                                 Not(HasSubstr("batch"))));
}

TEST(Models, ThreadsTailIsTheLastChunk) {
  GuardedBuffer<float> y(1003);
  for (std::size_t i = 0; i < 1000; ++i) y[i] = static_cast<float>(answer(i));
  const CheckResult r = check(y, Model::threads);
  EXPECT_THAT(r.diagnosis, AllOf(HasSubstr("the split into chunks drops the remainder"),
                                 Not(HasSubstr("SIMD"))));
}

TEST(Models, ASimdOutputSmallerThanABatchPointsToTheTailLoop) {
  GuardedBuffer<float> y(3);
  EXPECT_THAT(check(y, Model::simd).diagnosis, HasSubstr("only a scalar tail loop writes"));
}

TEST(Races, AnOutputThatChangesBetweenRunsIsARace) {
  auto y = filled(256, answer);
  y[10] = 99;
  int runs = 0;
  // The second run differs in another element, as a race would.
  const CheckResult r = check(y, Model::cuda, {}, [&] {
    ++runs;
    y.poison();
    for (std::size_t i = 0; i < 256; ++i) y[i] = static_cast<float>(answer(i));
    y[200] = -5;
  });
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(r.unstable);
  EXPECT_THAT(r.diagnosis,
              AllOf(HasSubstr("the output differs between two runs with the same inputs"),
                    HasSubstr("2 elements, the first at index 10: 99, then"),
                    HasSubstr("compute-sanitizer --tool racecheck")));
}

TEST(Races, ThreadsPointToThreadSanitizerForTheirLab) {
  auto y = filled(64, answer);
  y[0] = 42;
  const CheckResult r = check(y, Model::threads, {}, [&] { y[0] = 43; });
  EXPECT_THAT(r.diagnosis,
              AllOf(HasSubstr("a race"), HasSubstr("cmake --workflow --preset lab07-tsan")));
}

TEST(Races, TheSameWrongOutputTwiceIsNoRace) {
  auto y = filled(64, answer);
  y[5] = 1;
  const CheckResult r = check(y, Model::cuda, {}, [&] { y[5] = 1; });
  EXPECT_FALSE(r.unstable);
  EXPECT_THAT(r.diagnosis, Not(HasSubstr("differs between two runs")));
}

TEST(Races, APassingCheckRunsOnce) {
  auto y = filled(64, answer);
  int runs = 0;
  EXPECT_TRUE(check(y, Model::cuda, {}, [&] { ++runs; }).ok);
  EXPECT_EQ(runs, 0);
}

}  // namespace

// --- A formula of the inputs that the wrong elements follow --------------------------------------

// Inputs of a made-up binary kernel, and its output computed by `f` in float.
struct TwoInputs {
  std::vector<float> a, b;
  explicit TwoInputs(std::size_t n) : a(n), b(n) {
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(std::sin(0.7 * double(i)) * 3);
      b[i] = static_cast<float>(std::cos(1.3 * double(i)) * 2);
    }
  }
  CheckResult check(const std::function<float(float, float)>& f,
                    const std::function<double(double, double)>& right) const {
    GuardedBuffer<float> y(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) y[i] = f(a[i], b[i]);
    return workbook::check_elementwise(
        y, [&](std::size_t i) { return right(a[i], b[i]); },
        {.where = where(Model::simd),
         .tolerance = workbook::Tolerance::roundings(3),
         .inputs = {workbook::column("a", a), workbook::column("b", b)}});
  }
};

TEST(Formula, WrongElementsThatFollowAFormulaOfTheInputsAreGivenIt) {
  const TwoInputs in(1000);
  const CheckResult r = in.check([](float a, float b) { return a * a - b * b; },
                                 [](double a, double b) { return (a - b) * (a - b); });
  EXPECT_EQ(r.specificity, workbook::Specificity::pattern);
  EXPECT_THAT(r.diagnosis, HasSubstr("your output is a*a - b*b, where the answer is a*a - "
                                     "2*a*b + b*b"));
}

TEST(Formula, OneInputIsFittedOnEachSignApart) {
  std::vector<float> x(999);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 5);
  GuardedBuffer<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : 0.01f * x[i];  // leaky
  const CheckResult r =
      workbook::check_elementwise(y, [&](std::size_t i) { return x[i] > 0 ? double(x[i]) : 0.0; },
                                  {.where = where(Model::simd),
                                   .tolerance = workbook::Tolerance::exact(),
                                   .inputs = {workbook::column("x", x)}});
  EXPECT_THAT(r.diagnosis, HasSubstr("where x < 0, your output is 0.01*x, where the answer is 0"));
  EXPECT_THAT(r.diagnosis, Not(HasSubstr(">= 0")));  // right there: not a wrong element
}

TEST(Formula, TheRightFormulaComputedWithLessPrecisionIsSaidSo) {
  // (a - b)^2 expanded in float, a*a - 2*a*b + b*b: where b is close to a, the products cancel.
  TwoInputs in(1000);
  for (std::size_t i = 0; i < in.a.size(); i += 50) in.b[i] = in.a[i] * (1 + 1e-4f);
  const CheckResult r = in.check([](float a, float b) { return a * a - 2 * a * b + b * b; },
                                 [](double a, double b) { return (a - b) * (a - b); });
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.diagnosis, HasSubstr("the output follows the right formula, a*a - 2*a*b + b*b, "
                                     "within the rounding of its terms"));
}

TEST(Formula, NoFormulaForValuesThatFollowNone) {
  const TwoInputs in(1000);
  const CheckResult r = in.check(
      [](float a, float b) { return (a - b) * (a - b) + (a > b ? 1.0f : 0.0f) * std::sin(a * 10); },
      [](double a, double b) { return (a - b) * (a - b); });
  EXPECT_THAT(r.diagnosis, HasSubstr("no simple pattern"));
}

// --- Where the wrong elements of a matrix lie ----------------------------------------------------

TEST(Region, ARightLeadingBlockOfColumnsIsSaidWithTheColumnsAfterIt) {
  // 10 rows of 200: columns 0 to 63 right, the rest (more than half) wrong with no pattern.
  auto y = filled(2000, answer);
  for (std::size_t i = 0; i < 2000; ++i)
    if (i % 200 >= 64) y[i] = static_cast<float>(answer(i) + 1 + (i * 7919) % 13);
  const CheckResult r = check(y, Model::simd, {}, {}, {.rows = 10, .cols = 200});
  EXPECT_EQ(r.specificity, workbook::Specificity::observed);  // where, not why
  EXPECT_THAT(r.diagnosis, HasSubstr("columns 0 to 63 are right in every row, and every wrong "
                                     "element lies in columns 64 to 199"));
}

TEST(Region, ALeadingColumnRightAndEveryLaterOneExactlyZeroIsALoopThatRanOnce) {
  // 10 rows of 50: column 0 right, every other element exactly 0 (an index not reset per element).
  auto y = filled(500, answer);
  for (std::size_t i = 0; i < 500; ++i)
    if (i % 50 != 0) y[i] = 0.0f;
  const CheckResult r = check(y, Model::simd, {}, {}, {.rows = 10, .cols = 50});
  EXPECT_THAT(r.diagnosis, HasSubstr("column 0 is right in every row, and every wrong element lies "
                                     "in columns 1 to 49"));
  EXPECT_THAT(r.diagnosis, HasSubstr("each of them exactly 0: what computes an element ran for "
                                     "the first column only"));
  EXPECT_THAT(r.diagnosis, Not(HasSubstr("a block or tile")));
}

TEST(Region, IntegersBitPatternsReadAsFloatsAreSaid) {
  // Each answer's rounded value, as an int32, reinterpreted as a float.
  auto y = filled(300, answer);
  for (std::size_t i = 0; i < 300; ++i)
    y[i] = std::bit_cast<float>(static_cast<std::int32_t>(std::lround(answer(i) * 4)));
  const CheckResult r = check(y);
  EXPECT_THAT(r.diagnosis, HasSubstr("integers' bit patterns read as floats"));
}
