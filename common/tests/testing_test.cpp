// The test glue of testing.hpp: how much a diagnosis tells (Specificity, set by the checks), a test
// of many cases reporting its most telling failure and which cases failed, the registry of live
// buffers, and the crash report, on made-up facts and on real crashes in a child process.
#include <workbook/check.hpp>
#include <workbook/internal/code_location.hpp>
#include <workbook/internal/compiler_warnings.hpp>
#include <workbook/internal/crash_report.hpp>
#include <workbook/live_buffers.hpp>
#include <workbook/testing.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <immintrin.h>
#include <unistd.h>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using workbook::CheckResult;
using workbook::GuardedBuffer;
using workbook::Specificity;
using workbook::testing::Cases;

workbook::Where where() {
  return {"kernel", "labs/07_example/kernel.cpp", workbook::Model::simd};
}

double answer(std::size_t i) {
  return 0.25 + static_cast<double>(i % 13) - 4.0;
}

// The check of a made-up kernel in batches of 16, with one mistake in its catalogue: every element
// negated.
CheckResult check(const GuardedBuffer<float>& y) {
  return workbook::check_elementwise(
      y, answer,
      {.where = where(),
       .tolerance = workbook::Tolerance::exact(),
       .mistakes =
           [] {
             return std::vector<workbook::Mistake>{{"the negated answer", "negate it back.",
                                                    [](std::size_t i) { return -answer(i); }}};
           },
       .lanes = 16});
}

// y[i] = answer(i) for i < written; the rest stays poison.
GuardedBuffer<float> written_up_to(std::size_t n, std::size_t written) {
  GuardedBuffer<float> y(n);
  for (std::size_t i = 0; i < written; ++i) y[i] = static_cast<float>(answer(i));
  return y;
}

// --- Specificity, set by the checks --------------------------------------------------------------

TEST(Specificity, SaysHowMuchEachDiagnosisTells) {
  EXPECT_EQ(check(written_up_to(40, 40)).specificity, Specificity::none) << "passed";
  EXPECT_EQ(check(written_up_to(5, 0)).specificity, Specificity::observed)
      << "never written, n less than a batch: nothing to go on";
  EXPECT_EQ(check(written_up_to(40, 0)).specificity, Specificity::observed);
  EXPECT_EQ(check(written_up_to(40, 32)).specificity, Specificity::pattern) << "the tail";
  GuardedBuffer<float> negated(40);
  for (std::size_t i = 0; i < 40; ++i) negated[i] = static_cast<float>(-answer(i));
  EXPECT_EQ(check(negated).specificity, Specificity::mistake);
  GuardedBuffer<float> past_the_end = written_up_to(40, 40);
  past_the_end.data()[40] = 1.0f;
  EXPECT_EQ(check(past_the_end).specificity, Specificity::pattern);

  const workbook::ReductionOracle sum{.terms = 100, .term = [](std::size_t) { return 1.0; }};
  EXPECT_EQ(workbook::check_reduction(0.0, sum, where()).specificity, Specificity::observed);
  EXPECT_EQ(workbook::check_reduction(97.0, sum, where()).specificity, Specificity::pattern)
      << "the last 3 left out";
  EXPECT_EQ(
      workbook::check_reduction(
          7.0, sum, where(),
          [] {
            return std::vector<workbook::Mistake>{{"seven", "", [](std::size_t) { return 7.0; }}};
          })
          .specificity,
      Specificity::mistake);
}

TEST(Specificity, RankCountsANamedMistakeAndAFailureWithoutALevel) {
  CheckResult by_hand;
  EXPECT_EQ(workbook::testing::rank(by_hand), Specificity::none) << "ok";
  by_hand.ok = false;
  EXPECT_EQ(workbook::testing::rank(by_hand), Specificity::observed);
  by_hand.mistake = "the variance over n - 1";
  EXPECT_EQ(workbook::testing::rank(by_hand), Specificity::mistake);
}

TEST(Specificity, TheLastBatchLeftOutIsNamedAsTheLoopBound) {
  // n a multiple of the batch, and exactly the last batch unwritten: the loop's bound, not a tail.
  const CheckResult r = check(written_up_to(64, 48));
  EXPECT_THAT(r.diagnosis, HasSubstr("your SIMD loop stops one batch early"));
  EXPECT_EQ(r.specificity, Specificity::pattern);
}

// --- Cases ---------------------------------------------------------------------------------------

// A kernel with no tail loop, run at sizes 0..67: below 16 nothing is written at all.
TEST(Cases, ReportsTheMostTellingFailureNotTheFirst) {
  Cases cases(where(), "size");
  for (std::size_t n = 0; n <= 67; ++n) {
    cases.next_size(n);
    cases.check(check(written_up_to(n, n / 16 * 16)));
  }
  ASSERT_FALSE(cases.passed());
  const std::string report = cases.report();
  // n = 1 reads "the output was never written"; the largest size shows the tail.
  EXPECT_THAT(report, StartsWith("kernel: 3 of 67 elements are wrong"));
  EXPECT_THAT(report, HasSubstr("  Case: n = 67 (of the 63 sizes that failed, the one whose"));
  EXPECT_THAT(report, HasSubstr("the last 3 elements were never written"));
  EXPECT_THAT(report, Not(HasSubstr("never written, and n =")));
  // What separates the sizes comes right under the case, the list of sizes at the end.
  EXPECT_THAT(report, HasSubstr("the one whose diagnosis says most; all are listed below)\n"
                                "  Across the sizes: Every size that passed is a multiple of 16, "
                                "and none that failed.\n  Diagnosis:"));
  EXPECT_THAT(report, HasSubstr("Failed at 63 of 68 sizes: n = 1..15, 17..31, 33..47, 49..63, "
                                "65..67; passed at n = 0, 16, 32, 48, 64.\n"));
  EXPECT_FALSE(cases.verdict());
}

TEST(Cases, AMistakeBeatsAPatternWhichBeatsAnObservation) {
  GuardedBuffer<float> negated(20);
  for (std::size_t i = 0; i < 20; ++i) negated[i] = static_cast<float>(-answer(i));
  Cases cases(where(), "shift");
  cases.next("never written");
  cases.check(check(written_up_to(100, 0)));
  cases.next("negated");
  cases.check(check(negated));
  cases.next("tail");
  cases.check(check(written_up_to(1000, 992)));
  cases.next("passes");
  cases.check(check(written_up_to(10, 10)));
  EXPECT_THAT(cases.report(), HasSubstr("your output matches the negated answer"));
  EXPECT_THAT(cases.report(), HasSubstr("  Case: negated (of the 3 shifts that failed"));
  EXPECT_THAT(cases.report(), HasSubstr("Failed at 3 of 4 shifts: never written; negated; tail."));
}

TEST(Cases, SayWhichValueOfTheirParametersSeparatesTheFailuresFromThePasses) {
  // Shapes whose failures are exactly those with k past 256 (a second block of k): said, whatever
  // the other parameters do; nothing when no parameter separates them.
  Cases cases(where(), "shape");
  for (auto [m, k] : {std::pair<int, int>{15, 16}, {95, 257}, {193, 255}, {13, 385}, {50, 129}}) {
    cases.next("m = " + std::to_string(m) + ", k = " + std::to_string(k));
    cases.check(check(k > 256 ? written_up_to(100, 90) : written_up_to(10, 10)));
  }
  EXPECT_THAT(cases.report(),
              HasSubstr("Every shape with k > 255 failed, and every one with k <= 255 passed"));
  Cases mixed(where(), "shape");
  for (auto [m, k] : {std::pair<int, int>{15, 300}, {95, 257}, {193, 16}}) {
    mixed.next("m = " + std::to_string(m) + ", k = " + std::to_string(k));
    mixed.check(check(m == 95 ? written_up_to(100, 90) : written_up_to(10, 10)));
  }
  EXPECT_THAT(mixed.report(), Not(HasSubstr("Every shape with")));
  // The failing shapes have both the larger k and the larger n: neither is named.
  Cases both(where(), "shape");
  for (auto [n, k] : {std::pair<int, int>{5, 16}, {7, 255}, {65, 2000}, {129, 5000}}) {
    both.next("n = " + std::to_string(n) + ", k = " + std::to_string(k));
    both.check(check(k > 1000 ? written_up_to(100, 90) : written_up_to(10, 10)));
  }
  EXPECT_THAT(both.report(), Not(HasSubstr("Every shape with")));
  // Only odd k fails (a loop unrolled by 2 whose last step is wrong), at no threshold: said; an
  // odd k may also pass.
  Cases odd(where(), "shape");
  for (auto [m, k] : {std::pair<int, int>{3, 1}, {3, 2}, {5, 3}, {5, 4}, {9, 7}, {2, 5}}) {
    odd.next("m = " + std::to_string(m) + ", k = " + std::to_string(k));
    odd.check(check(k % 2 == 1 && m > 2 ? written_up_to(100, 90) : written_up_to(10, 10)));
  }
  EXPECT_THAT(odd.report(), HasSubstr("Every shape that failed has an odd k, and shapes with an "
                                      "even k passed: look at a loop over k that takes two steps"));
}

TEST(Cases, SayWhenTheShapesThatPassAreThoseWhereTwoSizesAreEqual) {
  // n and k swapped somewhere: the shapes with n = k pass. ldb = n and lda = k of packed matrices
  // go with them and are not named apart.
  Cases cases(where(), "shape");
  for (std::size_t m : {1, 2, 3})
    for (std::size_t n : {1, 2, 3})
      for (std::size_t k : {1, 2, 3}) {
        cases.next("m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                   ", k = " + std::to_string(k) + ", lda = " + std::to_string(k) +
                   ", ldb = " + std::to_string(n));
        cases.check(check(n != k ? written_up_to(10, 8) : written_up_to(10, 10)));
      }
  EXPECT_THAT(cases.report(), HasSubstr("Across the shapes: Every shape that passed has k = n, "
                                        "and every one that failed has k != n"));
}

TEST(Cases, SayWhenTheFailingSizesAreThoseWithABatchLeftOverFromAnUnrolledLoop) {
  // A loop two batches at a time is right, the batch left over is not: the sizes with an odd
  // number of whole batches fail, whatever their tail.
  const std::size_t w = workbook::simd_lanes<float>();
  Cases cases(where(), "size");
  for (std::size_t n = 0; n <= 8 * w + 3; ++n) {
    cases.next_size(n);
    cases.check(check((n / w) % 2 == 1 ? written_up_to(n + 10, n) : written_up_to(10, 10)));
  }
  EXPECT_THAT(cases.report(),
              HasSubstr("Across the sizes: Every size that failed has a number of whole batches "
                        "of " +
                        std::to_string(w) + " (n / " + std::to_string(w) +
                        ") that is not a multiple of 2, and every size that passed has a multiple "
                        "of 2"));
}

TEST(Cases, SayWhenTheBatchesLeftOverFailOnlyAfterAPassOfTheUnrolledLoop) {
  // The leftover batch goes into the wrong accumulator, which matters only once the loop two
  // batches at a time has run: n / w = 3, 5, 7 fail, 1 passes.
  const std::size_t w = workbook::simd_lanes<float>();
  Cases cases(where(), "size");
  for (std::size_t n = 0; n <= 8 * w + 3; ++n) {
    cases.next_size(n);
    const bool wrong = (n / w) % 2 == 1 && n / w > 2;
    cases.check(check(wrong ? written_up_to(n + 10, n) : written_up_to(10, 10)));
  }
  EXPECT_THAT(cases.report(), HasSubstr(") that is not a multiple of 2 and is more than 2, and "
                                        "every size that passed has a multiple of 2, or fewer "
                                        "than 2"));
}

TEST(Cases, SayWhichPhraseOfTheirDescriptionsTheFailuresShare) {
  // Failing exactly where B has one scale for the whole tensor: named, whatever the sizes do.
  Cases cases(where());
  for (const char* shape : {"7 x 17 x 33", "64 x 48 x 100"})
    for (const char* a : {"A per tensor", "A per row"})
      for (const char* b : {"B per tensor", "B per column"}) {
        cases.next(std::string(shape) + ", " + a + ", " + b);
        const bool wrong = std::string(b) == "B per tensor";
        cases.check(check(wrong ? written_up_to(100, 90) : written_up_to(10, 10)));
      }
  EXPECT_THAT(cases.report(), HasSubstr("  Across the cases: Every case with \"B per tensor\" "
                                        "failed (4 of 8), and every one without it passed"));
  // Two phrases that go together in every case (each failing case has both): neither is named.
  Cases together(where());
  for (int i = 0; i < 6; ++i) {
    together.next(i % 2 ? "A per row, B per tensor" : "A per tensor, B per column");
    together.check(check(i % 2 ? written_up_to(100, 90) : written_up_to(10, 10)));
  }
  EXPECT_THAT(together.report(), Not(HasSubstr("Across the cases")));
  // One case of each: the phrase is said.
  Cases two(where());
  for (const char* scales : {"per tensor", "per row"}) {
    two.next(scales);
    two.check(check(std::string(scales) == "per tensor" ? written_up_to(100, 90)
                                                        : written_up_to(10, 10)));
  }
  EXPECT_THAT(two.report(), HasSubstr("Across the cases: Every case with \"per tensor\" failed "
                                      "(1 of 2), and every one without it passed"));
}

TEST(Cases, AMistakeOnlyOneCaseNamesWhileOthersSaySomethingElseIsACoincidence) {
  GuardedBuffer<float> negated(20);
  for (std::size_t i = 0; i < 20; ++i) negated[i] = static_cast<float>(-answer(i));
  Cases cases(where(), "size");
  cases.next("negated");
  cases.check(check(negated));
  cases.next("tail of 3");
  cases.check(check(written_up_to(67, 64)));
  cases.next("tail of 8");
  cases.check(check(written_up_to(1000, 992)));
  EXPECT_THAT(cases.report(), HasSubstr("  Case: tail of 8 (of the 3 sizes that failed"));
  EXPECT_THAT(cases.report(), HasSubstr("the last 8 elements were never written"));
}

TEST(Cases, AMistakeOnlyOneCaseNamesAmongFailuresThatNameNothingIsACoincidence) {
  // A reduction's one value can fall within a mistake's tolerance by chance at one size of many.
  const auto observed = [](std::size_t checked) {
    CheckResult r;
    r.ok = false;
    r.summary = "kernel: no simple pattern at " + std::to_string(checked);
    r.checked = checked;
    r.specificity = Specificity::observed;
    return r;
  };
  Cases cases(where(), "size");
  for (std::size_t n : {10, 20, 30}) {
    cases.next_size(n);
    cases.check(observed(n));
  }
  CheckResult chance = observed(1);  // one value compared, as a reduction's check does
  chance.mistake = "the first 8 terms in place of the tail's";
  chance.specificity = Specificity::mistake;
  cases.next_size(25);
  cases.check(chance);
  EXPECT_THAT(cases.report(), StartsWith("kernel: no simple pattern at 30"));
  // The same for a match on a tiny output: 6 numbers (a 3 x 2 matrix) that no other shape shares.
  Cases shapes(where(), "shape");
  for (std::size_t n : {10, 20, 30}) {
    shapes.next_size(n);
    shapes.check(observed(n));
  }
  CheckResult tiny = observed(6);
  tiny.mistake = "the loop over p running to n";
  tiny.specificity = Specificity::mistake;
  shapes.next_size(6);
  shapes.check(tiny);
  EXPECT_THAT(shapes.report(), StartsWith("kernel: no simple pattern at 30"));
}

TEST(Cases, AReductionsDiagnosisThatFewFailingSizesAgreeOnIsACoincidence) {
  // A dot that is wrong from n = 32 on: one size's result falls within the bound of "accumulator
  // 1 of 8 left out", the others match nothing.
  const auto failure = [](std::size_t n, std::string key) {
    CheckResult r;
    r.ok = false;
    r.checked = 1;
    r.summary = "dot: wrong at " + std::to_string(n);
    r.diagnosis_key = key;
    r.specificity = key.empty() ? Specificity::observed : Specificity::pattern;
    return r;
  };
  Cases chance(where(), "size");
  for (std::size_t n = 0; n < 48; ++n) {
    chance.next_size(n);
    if (n >= 32) chance.check(failure(n, n == 40 ? "accumulator 1 of 8 left out" : ""));
  }
  EXPECT_THAT(chance.report(), StartsWith("dot: wrong at 47"));
  EXPECT_THAT(chance.report(), HasSubstr("Every size from 32 on failed, and every smaller one "
                                         "passed: look at what your code does first at n = 32"));
  // Four of the sixteen failing sizes agree: a quarter is evidence.
  Cases agreed(where(), "size");
  for (std::size_t n = 32; n < 48; ++n) {
    agreed.next_size(n);
    agreed.check(failure(n, n % 4 == 0 ? "the last elements left out" : ""));
  }
  EXPECT_THAT(agreed.report(), StartsWith("dot: wrong at 44"));
}

TEST(Cases, OfTheMistakesOneOutputMatchesTheOneMostFailingCasesMatchIsReported) {
  // A scale whose lanes skip lane 0: at n = 4099 the one number also fits "the largest x" (the
  // largest magnitude was negative and in lane 0), at the other sizes only the lane.
  const auto matching = [](std::size_t n, std::vector<std::string> mistakes) {
    CheckResult r;
    r.ok = false;
    r.checked = 1;
    r.summary = "scale: wrong at " + std::to_string(n);
    r.mistake = mistakes.front();
    r.diagnosis = "your result matches " + mistakes.front();
    r.specificity = Specificity::mistake;
    for (std::size_t i = 1; i < mistakes.size(); ++i)
      r.other_matches.push_back({mistakes[i], "", "your result matches " + mistakes[i]});
    return r;
  };
  Cases cases(where(), "size");
  for (std::size_t n : {48, 58, 59, 71}) {
    cases.next_size(n);
    cases.check(matching(n, {"every lane but lane 0"}));
  }
  cases.next_size(4099);
  cases.check(matching(4099, {"the largest x", "every lane but lane 0"}));
  const std::string report = cases.report();
  EXPECT_THAT(report, StartsWith("scale: wrong at 4099"));
  EXPECT_THAT(report, HasSubstr("Diagnosis: your result matches every lane but lane 0"));
  EXPECT_THAT(report, Not(HasSubstr("largest x")));
  // A broad entry, fitted to the output, that every failure matches does not displace a narrower
  // one that fewer match.
  Cases specific(where(), "size");
  for (std::size_t n : {48, 58, 59, 71}) {
    specific.next_size(n);
    CheckResult r = matching(n, {"threads 128-255 left out", "statistics not the row's own"});
    r.other_matches.back().broad = true;
    specific.check(r);
  }
  for (std::size_t n : {100, 30}) {
    specific.next_size(n);
    CheckResult broad = matching(n, {"statistics not the row's own"});
    broad.broad = true;  // alone, it ranks as a pattern
    specific.check(broad);
  }
  EXPECT_THAT(specific.report(), HasSubstr("your result matches threads 128-255 left out"));
}

TEST(Cases, AMistakeThatAPassingCaseRulesOutGivesWayToAnotherMatch) {
  // Sizes 32..63 pass, 64 on fail: "every other batch left out" fits the failures, but would
  // have failed at the passing sizes; another match of the same outputs, ruled out nowhere, wins.
  Cases cases(where(), "size");
  for (std::size_t n = 32; n < 64; ++n) {
    cases.next_size(n);
    CheckResult passed;
    passed.ok = true;
    passed.ruled_out = {"every other batch"};
    cases.check(passed);
  }
  for (std::size_t n = 64; n < 72; ++n) {
    cases.next_size(n);
    CheckResult r;
    r.ok = false;
    r.checked = 1;
    r.summary = "dot: wrong at " + std::to_string(n);
    r.mistake = r.diagnosis_key = "every other batch";
    r.diagnosis = "your result matches every other batch";
    r.specificity = Specificity::mistake;
    r.other_matches.push_back({"accumulators 1 and 3 lost", "accumulators 1 and 3 lost",
                               "your result matches accumulators 1 and 3 lost"});
    cases.check(r);
  }
  EXPECT_THAT(cases.report(),
              HasSubstr("Diagnosis: your result matches accumulators 1 and 3 lost"));
  EXPECT_THAT(cases.report(), Not(HasSubstr("every other batch")));
}

TEST(Cases, AmongEqualsTheLargerCase) {
  Cases cases(where());
  cases.next("big");
  cases.check(check(written_up_to(1000, 992)));
  cases.next("small");
  cases.check(check(written_up_to(40, 32)));
  EXPECT_THAT(cases.report(), HasSubstr("  Case: big"));
}

TEST(Cases, AllPassedIsSuccess) {
  Cases cases(where(), "size");
  for (std::size_t n : {0, 1, 100}) {
    cases.next_size(n);
    EXPECT_TRUE(cases.check(check(written_up_to(n, n))));
  }
  EXPECT_TRUE(cases.passed());
  EXPECT_TRUE(cases.verdict());
  EXPECT_EQ(cases.report(), "");
}

TEST(Cases, OneCaseHasNoSummaryLine) {
  Cases cases(where());
  cases.next("m = 3");
  cases.check(check(written_up_to(40, 32)));
  EXPECT_THAT(cases.report(), HasSubstr("  Case: m = 3\n"));
  EXPECT_THAT(cases.report(), Not(HasSubstr("Failed at")));
}

TEST(Cases, FailuresLeftUnreportedByAnExceptionAreReportedAtTheEnd) {
  EXPECT_NONFATAL_FAILURE(
      {
        try {
          Cases cases(where(), "size");
          cases.next_size(40);
          cases.check(check(written_up_to(40, 32)));
          cases.next_size(1000);
          throw std::out_of_range("vector::_M_range_check");
        } catch (const std::out_of_range&) {
        }
      },
      "An exception ended the test in the case n = 1000, after these failures:\n"
      "kernel: 8 of 40 elements are wrong");
}

// --- The registry of live buffers ----------------------------------------------------------------

std::vector<workbook::LiveBuffer> live() {
  std::vector<workbook::LiveBuffer> out(workbook::detail::kLiveSlots);
  out.resize(workbook::live_buffers(out.data(), out.size()));
  return out;
}

TEST(LiveBuffers, AGuardedBufferIsRegisteredWhileItLives) {
  const std::size_t before = live().size();
  {
    GuardedBuffer<float> y(1000, 3);
    const auto buffers = live();
    ASSERT_EQ(buffers.size(), before + 1);
    const auto it = std::find_if(buffers.begin(), buffers.end(), [&](const auto& b) {
      return b.begin + b.front == reinterpret_cast<std::uintptr_t>(y.data());
    });
    ASSERT_NE(it, buffers.end());
    EXPECT_EQ(it->bytes, 4000u);
    EXPECT_EQ(it->back, GuardedBuffer<float>::kGuard * 4);
    EXPECT_STREQ(it->type, "floats");
    GuardedBuffer<float> moved = std::move(y);
    EXPECT_EQ(live().size(), before + 1) << "a move keeps one registration";
    GuardedBuffer<float> copy = moved;
    EXPECT_EQ(live().size(), before + 2) << "a copy has its own";
  }
  EXPECT_EQ(live().size(), before);
}

// --- The crash report, on made-up facts ----------------------------------------------------------

std::string report(const workbook::testing::internal::CrashFacts& facts) {
  char text[8192];
  const std::size_t length =
      workbook::testing::internal::format_crash_report(facts, text, sizeof text);
  EXPECT_EQ(length, std::string(text).size());
  return text;
}

// An output of 1000 floats with 64 guard floats on each side and element 0 at 0x10100 + 12.
workbook::LiveBuffer output_at(std::uintptr_t begin) {
  return {begin, 256 + 12, 4000, 256, 4, "floats", "output"};
}

workbook::testing::internal::CrashFacts facts(int signal, int code, std::uintptr_t address,
                                              const workbook::LiveBuffer* buffer) {
  workbook::testing::internal::CrashFacts f;
  f.signal = signal;
  f.code = code;
  f.address = address;
  f.test = "Relu.UnalignedInputAndOutput";
  f.function = "relu";
  f.file = "labs/01_vectorized_relu/vector_ops.cpp";
  f.case_context = "offsets from a 64-byte boundary, in floats: x 1, y 3";
  f.lab = "lab01";
  f.lab_folder = "labs/01_vectorized_relu";
  f.buffers = buffer;
  f.buffer_count = buffer ? 1 : 0;
  f.simd_bytes = 64;
  return f;
}

TEST(CrashReport, AGeneralProtectionFaultIsAnAlignedAccessOnAnUnalignedAddress) {
  const workbook::LiveBuffer y = output_at(0x10000);
  const std::string text = report(facts(SIGSEGV, SI_KERNEL, 0, &y));
  EXPECT_THAT(text, HasSubstr("*** CRASH: SIGSEGV (segmentation fault) in test "
                              "Relu.UnalignedInputAndOutput\n"));
  EXPECT_THAT(text, HasSubstr("While running relu, case: offsets from a 64-byte boundary, in "
                              "floats: x 1, y 3\n"));
  EXPECT_THAT(text, HasSubstr("an aligned load or store"));
  EXPECT_THAT(text, HasSubstr("the output (1000 floats) starts 12 bytes past a 64-byte boundary"));
  EXPECT_THAT(text, HasSubstr("Next: edit labs/01_vectorized_relu/vector_ops.cpp: relu."));
  EXPECT_THAT(text, HasSubstr("cmake --preset lab01 -B build/lab01-asan "
                              "-DWORKBOOK_SANITIZER=address -DCMAKE_BUILD_TYPE=RelWithDebInfo\n"));
  EXPECT_THAT(text,
              HasSubstr("    UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build/lab01-asan -R "
                        "'lab01.Relu.UnalignedInputAndOutput' --output-on-failure\n"));
}

TEST(CrashReport, PlacesTheAddressAgainstTheBufferAndItsGuards) {
  const workbook::LiveBuffer y = output_at(0x10000);
  const std::uintptr_t first = 0x10000 + 268, end = first + 4000;
  EXPECT_THAT(
      report(facts(SIGSEGV, SEGV_MAPERR, end + 4, &y)),
      HasSubstr("is 0x" +
                [&] {
                  char hex[32];
                  std::snprintf(hex, sizeof hex, "%lx", static_cast<unsigned long>(end + 4));
                  return std::string(hex);
                }() +
                ": 4 bytes past the end of the output (1000 floats), inside its guard zone. "
                "That is a read or write past the end"));
  EXPECT_THAT(report(facts(SIGSEGV, SEGV_MAPERR, end + 256 + 64, &y)),
              HasSubstr(": 320 bytes past the end of the output (1000 floats), beyond its guard "
                        "zone."));
  EXPECT_THAT(report(facts(SIGSEGV, SEGV_MAPERR, first - 8, &y)),
              HasSubstr(": 8 bytes before the first element of the output (1000 floats), inside "
                        "its guard zone. That is an access before the start"));
  EXPECT_THAT(report(facts(SIGSEGV, SEGV_ACCERR, first + 40, &y)),
              HasSubstr(": inside the output (1000 floats), at element 10."));
  EXPECT_THAT(report(facts(SIGSEGV, SEGV_MAPERR, 0x7f0000000000, &y)),
              HasSubstr("in or near none of the test's buffers"));
  // 45 KB past a buffer of 20 floats is not an overrun of it: a buffer of the student's own.
  const workbook::LiveBuffer small{0x10000, 256, 80, 256, 4, "floats", "output"};
  const std::string far = report(facts(SIGSEGV, SEGV_MAPERR, 0x10000 + 256 + 80 + 45872, &small));
  EXPECT_THAT(far, HasSubstr("in or near none of the test's buffers"));
  EXPECT_THAT(far, HasSubstr("a buffer of your own (a packing buffer"));
}

TEST(CrashReport, AnAbortSaysWhatTheLibrarysMessageAboveItMeans) {
  const std::string text = report(facts(SIGABRT, SI_TKILL, 0, nullptr));
  EXPECT_THAT(text, HasSubstr("*** CRASH: SIGABRT (the program aborted) in test "
                              "Relu.UnalignedInputAndOutput\n"));
  EXPECT_THAT(text,
              HasSubstr("wrote past the end (or before the start) of a block of heap memory"));
  EXPECT_THAT(text, HasSubstr("a packing buffer, a std::vector sized too small"));
  EXPECT_THAT(text, HasSubstr("Next: edit labs/01_vectorized_relu/vector_ops.cpp: relu."));
}

TEST(CrashReport, NullPointerStackOverflowDivisionAndIllegalInstruction) {
  EXPECT_THAT(report(facts(SIGSEGV, SEGV_MAPERR, 0x10, nullptr)),
              HasSubstr("is 0x10, near 0: a null pointer was read or written"));
  auto overflow = facts(SIGSEGV, SEGV_MAPERR, 0x7ffd0000 - 8, nullptr);
  overflow.stack = 0x7ffd0000;
  EXPECT_THAT(report(overflow), HasSubstr("the stack overflowed"));
  EXPECT_THAT(report(facts(SIGFPE, FPE_INTDIV, 0x401000, nullptr)),
              HasSubstr("An integer division (or %) by zero"));
  EXPECT_THAT(report(facts(SIGILL, ILL_ILLOPN, 0x401000, nullptr)),
              HasSubstr("an instruction set this CPU lacks"));
}

TEST(CrashReport, ANullPointerAtNZeroNamesTheLoopBoundThatRan) {
  auto empty = facts(SIGSEGV, SEGV_MAPERR, 0x0, nullptr);
  empty.case_context = "n = 0";
  EXPECT_THAT(report(empty), HasSubstr("The case is n = 0, whose spans are empty"));
  EXPECT_THAT(report(empty), HasSubstr("n - k wraps around to a huge number"));
  auto other = facts(SIGSEGV, SEGV_MAPERR, 0x0, nullptr);
  other.case_context = "n = 0..3";
  EXPECT_THAT(report(other), Not(HasSubstr("The case is n = 0")));
  // A line with no loop that hands the empty range to std::ranges::max; a loop's body that
  // indexes is the loop bound's fault still.
  auto max_of_none = empty;
  max_of_none.location =
      "  It crashed at labs/04_int8_quantization/quantize.cpp:70, in symmetric_scale:\n"
      "      70 |     const float largest = std::ranges::max(magnitudes);\n";
  EXPECT_THAT(report(max_of_none), HasSubstr("gives the empty range to something that needs an "
                                             "element (std::ranges::max"));
  EXPECT_THAT(report(max_of_none), Not(HasSubstr("n - k wraps around")));
  auto body = empty;
  body.location =
      "  It crashed at labs/01_vectorized_relu/relu.cpp:12, in relu:\n"
      "      12 |   y[i] = std::max(x[i], 0.0f);\n"
      "  called from main at labs/01_vectorized_relu/relu.cpp:40:\n"
      "      40 | for (std::size_t i = 0; i <= n; ++i)\n";
  EXPECT_THAT(report(body), Not(HasSubstr("gives the empty range")));
  EXPECT_THAT(report(body), HasSubstr("n - k wraps around"));
}

TEST(CrashReport, OutsideACasesItNamesTheLabFolderAndSaysWhatFailedBefore) {
  auto f = facts(SIGSEGV, SEGV_MAPERR, 0x10, nullptr);
  f.function = "";
  f.file = "";
  f.case_context = "";
  EXPECT_THAT(report(f), HasSubstr("Next: edit your code in labs/01_vectorized_relu/ (the "
                                   "function this test calls)."));
  f.lab = "";
  EXPECT_THAT(report(f), HasSubstr("cmake --preset labNN"));
  f.earlier = "2 of the 3 sizes run so far failed";
  EXPECT_THAT(report(f), HasSubstr("Before the crash, 2 of the 3 sizes run so far failed\n"));
}

TEST(CrashReport, LeadsWithTheFailureBeforeItWhenThatNamesACause) {
  auto f = facts(SIGSEGV, SEGV_MAPERR, 0x10, nullptr);
  f.earlier = "1 of the 2 sizes run so far failed; the most telling (n = 7): ...";
  const std::string after = report(f);
  EXPECT_LT(after.find("a null pointer"), after.find("Before the crash"));
  EXPECT_THAT(after, Not(HasSubstr("What the crash itself shows")));
  f.earlier_names_a_cause = true;
  const std::string first = report(f);
  EXPECT_LT(first.find("Before the crash"), first.find("What the crash itself shows:\n"));
  EXPECT_LT(first.find("What the crash itself shows"), first.find("a null pointer"));
}

TEST(CrashReport, WhatIsRunningForAWatchdog) {
  Cases cases(where(), "size");
  cases.next_size(40);
  cases.check(check(written_up_to(40, 32)));
  cases.next_size(1000);
  char text[4096];
  workbook::testing::internal::format_running(text, sizeof text);
  EXPECT_THAT(text, HasSubstr("  In test CrashReport.WhatIsRunningForAWatchdog\n"
                              "  While running kernel, case: n = 1000\n"
                              "  Before this case, 1 of the 2 sizes run so far failed; the most "
                              "telling (n = 40): kernel: 8 of 40 elements are wrong"));
  EXPECT_FALSE(cases.verdict());
}

TEST(CrashReport, IsCutAtTheBuffersEnd) {
  const workbook::LiveBuffer y = output_at(0x10000);
  char small[40];
  const std::size_t length = workbook::testing::internal::format_crash_report(
      facts(SIGSEGV, SI_KERNEL, 0, &y), small, sizeof small);
  EXPECT_EQ(length, sizeof small - 1);
  EXPECT_EQ(std::string(small).size(), length);
}

// --- Where in the lab's code, on made-up addr2line output
// -----------------------------------------

// A lab's source file under a fresh folder, and the addr2line lines of a stack through it.
class CodeLocation : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("workbook-code-location-" + std::to_string(::getpid()));
    std::filesystem::create_directories(root_ / "labs/02_matmul");
    std::ofstream(root_ / "labs/02_matmul/matmul.cpp")
        << "// packing\n"
           "void pack_b(float* b, std::size_t count) {\n"
           "    std::fill(b, b + count, 0.0f);\n"
           "}\n";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string file() const { return (root_ / "labs/02_matmul/matmul.cpp").string(); }
  std::string describe(const std::string& symbols, const char* verb, bool* innermost = nullptr,
                       const char* thrown = nullptr) {
    char text[2048];
    const std::size_t length = workbook::testing::internal::describe_symbolized(
        symbols.c_str(), verb, text, sizeof text, innermost, thrown);
    EXPECT_EQ(length, std::string(text).size());
    return text;
  }
  std::filesystem::path root_;
};

TEST_F(CodeLocation, NamesTheLabsLineAndTheLibraryFunctionItCalled) {
  bool innermost = true;
  const std::string text = describe(
      "[library] memset\n"
      "void std::__fill_a1<float*, float>(float*, float*, float const&) at "
      "/usr/include/c++/12/bits/stl_algobase.h:922\n"
      " (inlined by) void std::fill<float*, float>(float*, float*, float const&) at "
      "/usr/include/c++/12/bits/stl_algobase.h:998\n"
      " (inlined by) workbook::lab02::(anonymous namespace)::pack_b(float*, unsigned long) at " +
          file() +
          ":3 (discriminator 2)\n"
          " (inlined by) lab02::matmul(std::span<float const, 18446744073709551615ul>) at " +
          file() +
          ":40\n"
          "Matmul_TinyShapes_Test::TestBody() at "
          "/home/s/wb/labs/02_matmul/tests/matmul_test.cpp:5\n"
          "?? ??:0\n",
      "crashed", &innermost);
  EXPECT_EQ(text,
            "  It crashed at labs/02_matmul/matmul.cpp:3, in pack_b (inside std::fill, which this "
            "line calls: in memset):\n"
            "      3 | std::fill(b, b + count, 0.0f);\n"
            "  called from matmul at labs/02_matmul/matmul.cpp:40:\n");  // (no line 40 to show)
  EXPECT_FALSE(innermost);
}

TEST_F(CodeLocation, TheLabsOwnThrowAndALambdasName) {
  bool innermost = false;
  const std::string thrown = describe(
      "lab04::quantize_rows(std::span<float const, 18446744073709551615ul>, unsigned "
      "long) at " +
          file() + ":2\n",
      "threw", &innermost);
  EXPECT_THAT(thrown, StartsWith("  It threw at labs/02_matmul/matmul.cpp:2, in quantize_rows:\n"
                                 "      2 | void pack_b("));
  EXPECT_TRUE(innermost);
  EXPECT_THAT(
      describe("workbook::lab03::ThreadPool::parallel_for(unsigned long, std::function<void "
               "(unsigned long, unsigned long)> const&)::{lambda()#1}::operator()() const "
               "at " +
                   file() + ":9\n",
               "crashed"),
      StartsWith("  It crashed at labs/02_matmul/matmul.cpp:9, in ThreadPool::parallel_for "
                 "(a lambda in it):\n"));  // no line 9: no source line follows
}

TEST_F(CodeLocation, AHeadersLinesInlinedUnderTheCallersNameAreNotACallee) {
  // -g1 may leave an inlined header function without its own name: the caller's name stands at
  // the header's line. The callee named is the library's own function further in.
  EXPECT_THAT(describe("[library] pthread_cond_wait\n"
                       "lab03::ThreadPool::work() at /usr/include/c++/12/condition_variable:102\n"
                       " (inlined by) lab03::ThreadPool::work() at " +
                           file() + ":3\n",
                       "waits"),
              StartsWith("  It waits at labs/02_matmul/matmul.cpp:3, in ThreadPool::work (inside "
                         "pthread_cond_wait, which this line calls):\n"));
}

TEST_F(CodeLocation, TheThrowShownIsTheOneWhoseTextTheExceptionCarries) {
  // Two checks that throw; the optimiser merged their calls, and the line tables point at the
  // second. The exception's text is the first's: that one is shown, and the caller under it.
  std::ofstream(file()) << "void parallel_for(Range range, std::size_t grain) {\n"
                           "  if (grain == 0)\n"
                           "    throw std::invalid_argument(\"parallel_for: grain must be at least "
                           "1\");\n"
                           "  if (range.end < range.begin)\n"
                           "    throw std::invalid_argument(\"parallel_for: the range ends before "
                           "it begins\");\n"
                           "}\n"
                           "void process_batch() {\n"
                           "  parallel_for({0, n}, n / (4 * workers));\n"
                           "}\n";
  bool innermost = false;
  const std::string text =
      describe("lab03::parallel_for(lab03::Range, unsigned long) at " + file() +
                   ":5\n"
                   "lab03::process_batch() at " +
                   file() + ":8\n",
               "threw", &innermost, "parallel_for: grain must be at least 1");
  EXPECT_EQ(text,
            "  It threw at labs/02_matmul/matmul.cpp:3, in parallel_for:\n"
            "      2 | if (grain == 0)\n"
            "      3 |   throw std::invalid_argument(\"parallel_for: grain must be at least 1\");\n"
            "  called from process_batch at labs/02_matmul/matmul.cpp:8:\n"
            "      8 | parallel_for({0, n}, n / (4 * workers));\n");
  EXPECT_TRUE(innermost);
}

TEST_F(CodeLocation, ACheckoutUnderAFolderNamedTestsIsStillTheLabs) {
  EXPECT_THAT(describe("lab02::matmul() at /home/s/tests/wb/labs/02_matmul/matmul.cpp:3\n"
                       "TestBody() at /home/s/tests/wb/labs/02_matmul/tests/matmul_test.cpp:5\n",
                       "crashed"),
              StartsWith("  It crashed at labs/02_matmul/matmul.cpp:3, in matmul"));
}

TEST_F(CodeLocation, NothingWhenNoFrameIsInALabsSource) {
  EXPECT_EQ(describe("[library] memcpy\n"
                     "main at /home/s/wb/labs/02_matmul/tests/matmul_test.cpp:5\n"
                     "workbook::check(float) at /home/s/wb/common/src/check.cpp:7\n"
                     "?? ??:0\n",
                     "crashed"),
            "");
}

// --- The compiler's warnings about the lab's code ------------------------------------------------

TEST_F(CodeLocation, CompilerWarningsKeptByTheLauncherAreShownFromTheLabFolderOn) {
  // As cmake/keep_warnings.sh leaves them: one file per object, GCC's layout.
  const auto dir = root_ / "CMakeFiles/lab03_impl.dir";
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "thread_pool.cpp.o.warnings")
      << "/home/s/wb/labs/03_thread_pool/thread_pool.cpp: In function 'void parallel_for()':\n"
         "/home/s/wb/labs/03_thread_pool/thread_pool.cpp:64:20: warning: comparison of unsigned "
         "expression in '< 0' is always false [-Wtype-limits]\n"
         "   64 |   if (range.begin < 0) throw std::invalid_argument(\"reversed\");\n"
         "      |       ~~~~~~~~~~~~^~~\n";
  std::ofstream(dir / "sub/other.cpp.o.warnings")  // the same header's warning, seen again
      << "/home/s/wb/labs/03_thread_pool/thread_pool.cpp:64:20: warning: comparison of unsigned "
         "expression in '< 0' is always false [-Wtype-limits]\n";
  ::setenv("WORKBOOK_WARNINGS_DIR", dir.c_str(), 1);
  const std::string report = workbook::testing::internal::compiler_warnings_report();
  ::unsetenv("WORKBOOK_WARNINGS_DIR");
  EXPECT_EQ(report,
            "  Your compiler warned about your code when it built it (a warning is often the "
            "mistake itself):\n"
            "    labs/03_thread_pool/thread_pool.cpp:64:20: warning: comparison of unsigned "
            "expression in '< 0' is always false [-Wtype-limits]\n"
            "       64 |   if (range.begin < 0) throw std::invalid_argument(\"reversed\");\n");
  EXPECT_EQ(workbook::testing::internal::compiler_warnings_report(), "") << "no folder named";
}

// --- The crash report, on real crashes (in a child process) --------------------------------------

// Each crashes the way a kernel would; `volatile` keeps the compiler from seeing through it.
void write_through_null() {
  volatile float* volatile p = nullptr;
  p[4] = 1.0f;
}
void aligned_store_to_unaligned(float* out) {
  _mm_store_ps(out, _mm_set1_ps(1.0f));  // movaps: a 16-byte aligned address, or a fault
}
void divide(int a, int b) {
  volatile int dividend = a, divisor = b;
  volatile int quotient = dividend / divisor;
  (void)quotient;
}

TEST(CrashReportDeathTest, ANullPointerWriteIsReportedAndExitsWithTheCrashCode) {
  if (!workbook::testing::internal::crash_report_installed())
    GTEST_SKIP() << "no crash report in a sanitizer's build: the sanitizer reports crashes";
  EXPECT_EXIT(write_through_null(), ::testing::ExitedWithCode(workbook::testing::kCrashExitCode),
              "CRASH: SIGSEGV.*\n.*is 0x10, near 0: a null pointer");
}

TEST(CrashReportDeathTest, AnAlignedStoreOnAnUnalignedOutputNamesTheCaseAndTheAlignment) {
  if (!workbook::testing::internal::crash_report_installed())
    GTEST_SKIP() << "no crash report in a sanitizer's build: the sanitizer reports crashes";
  auto run = [] {
    Cases cases(where(), "shift");
    cases.next("before: fails");
    cases.check(check(written_up_to(40, 32)));
    cases.next("out starts 1 float past a 64-byte boundary");
    GuardedBuffer<float> out(100, 1);
    aligned_store_to_unaligned(out.data());
  };
  // The case before the crash names a pattern: the report leads with it.
  EXPECT_EXIT(run(), ::testing::ExitedWithCode(workbook::testing::kCrashExitCode),
              "While running kernel, case: out starts 1 float past a 64-byte boundary\n"
              "  Before the crash, 1 of the 2 shifts run so far failed; the most telling "
              "\\(before: fails\\)"
              "(.|\n)*What the crash itself shows:\n"
              "(.|\n)*an aligned load or store"
              "(.|\n)*the output \\(100 floats\\) starts 4 bytes past a"
              "(.|\n)*Next: edit labs/07_example/kernel.cpp: kernel");
}

TEST(CrashReportDeathTest, AnExceptionThatLeavesAThreadIsNamedWithTheCase) {
  if (!workbook::testing::internal::crash_report_installed())
    GTEST_SKIP() << "no crash report in a sanitizer's build: the sanitizer reports crashes";
  auto run = [] {
    Cases cases(where(), "size");
    cases.next_size(17);
    std::thread worker([] { throw std::runtime_error("the task failed"); });
    worker.join();
  };
  EXPECT_DEATH(run(),
               "TERMINATE: std::terminate was called \\(an exception: the task failed\\)"
               "(.|\n)*While running kernel, case: n = 17"
               "(.|\n)*catch it where it is thrown");
  // A future whose state was moved out: a task run twice.
  auto twice = [] {
    std::packaged_task<int()> task([] { return 1; });
    std::thread([&] {
      task();
      task();
    }).join();
  };
  EXPECT_DEATH(twice(), "std::future_error(.|\n)*run it once");
  // A lock unlocked when it no longer holds its mutex (unlocked for a task, never locked again).
  auto unlocked_twice = [] {
    std::thread([] {
      std::mutex m;
      std::unique_lock lock(m);
      lock.unlock();
      lock.unlock();
    }).join();
  };
  EXPECT_DEATH(unlocked_twice(), "Operation not permitted(.|\n)*does not hold its mutex");
  // A thread destroyed while it can still be joined.
  EXPECT_DEATH({ std::thread forgotten([] {}); },
               "\\(no exception\\)(.|\n)*join every thread before it goes");
}

TEST(CrashReportDeathTest, AnIntegerDivisionByZero) {
  if (!workbook::testing::internal::crash_report_installed())
    GTEST_SKIP() << "no crash report in a sanitizer's build: the sanitizer reports crashes";
  EXPECT_EXIT(divide(1000, 0), ::testing::ExitedWithCode(workbook::testing::kCrashExitCode),
              "CRASH: SIGFPE(.|\n)*An integer division \\(or %\\) by zero");
}

}  // namespace
