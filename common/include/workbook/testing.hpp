#pragma once
/// \file testing.hpp
/// \brief GoogleTest glue: seeded inputs per test, checks as assertions, tests of many cases that
/// report their most telling failure, and a crash report instead of a bare "SegFault".
///
/// Tests link workbook::testing_main, whose main() prints the seed with every failure so that
/// `WORKBOOK_SEED=<seed> ctest -R <test>` replays the same inputs, and turns a crash (SIGSEGV,
/// SIGBUS, SIGFPE, SIGILL) into a failure that says which test and case crashed, where the fault
/// address lies against the test's live buffers (GuardedBuffer), what that usually means, and the
/// command that finds the line.

#include <workbook/check.hpp>
#include <workbook/seed.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <vector>

/// GoogleTest glue: seeded inputs per test, checks as assertions, the tests' main().
namespace workbook::testing {

/// The generator for the running test, seeded from WORKBOOK_SEED and the test's full name.
Rng rng();

/// A CheckResult as a GoogleTest assertion, with its report as the failure message.
::testing::AssertionResult correct(const CheckResult& result);

/// The cases of one test (sizes, shifts, shapes), all checked before any is reported. A loop that
/// stopped at its first failure would report the smallest case, where every pattern looks the same
/// ("the output was never written" at n = 1); this reports the most telling failure (a named
/// mistake, then a generic pattern, then what was observed; the largest case among equals), then
/// one line saying which cases failed:
///
///     workbook::testing::Cases cases(lab01::oracle::where("relu"), "size");
///     for (std::size_t n : sizes) {
///       cases.next_size(n);  // "n = 17": named in the report, and in a crash report
///       ...
///       lab01::relu(as_span(x), y.span());
///       cases.check(lab01::oracle::check_relu(as_span(x), y));
///     }
///     EXPECT_ALL_CORRECT(cases);
///
/// While a Cases is alive, a crash names its function, file and current case, and the most
/// telling failure of the cases before it. Failures never reported (an exception left the loop,
/// or the test returned before verdict()) are reported when the Cases is destroyed.
class Cases {
 public:
  /// `where`: the function under test; `noun`: what one case is, for the summary ("size": "failed
  /// at 14 of 74 sizes").
  explicit Cases(Where where, std::string noun = "case");
  /// Reports failures that verdict() never reported, as a test failure.
  ~Cases();
  Cases(const Cases&) = delete;
  Cases& operator=(const Cases&) = delete;

  /// Starts a case described by `context` ("input starts 3 floats past a 64-byte boundary").
  void next(std::string context);
  /// Starts the case of size n: context "n = <n>", and the summary lists sizes as ranges.
  void next_size(std::size_t n);
  /// Records a check of the current case (a case may have several); returns result.ok.
  bool check(const CheckResult& result);

  /// True when no check failed.
  bool passed() const { return failures_.empty(); }
  /// The most telling failure's report, with its case, then which cases failed; "" when passed.
  /// The failures count as reported.
  std::string report() const;
  /// Success, or failure with report().
  ::testing::AssertionResult verdict() const;

 private:
  /// \cond PRIVATE
  // (Hidden from Doxygen: with private members left out it still links to a list of nested
  // classes that it does not write.)
  struct Case {
    std::string context;
    std::optional<std::size_t> size;
    bool failed = false;
  };
  struct Failure {
    std::size_t case_index;
    CheckResult result;  // as reported: the check's, or with another of its matches (resolve())
    CheckResult as_checked;
  };
  // The failure to report, and how much it tells once weighed against the other cases (a
  // catalogue match that other cases rule out tells only what was observed).
  struct Telling {
    const Failure* failure = nullptr;
    Specificity weight = Specificity::none;
  };
  /// \endcond
  // Gives each failure, of the catalogue mistakes its output matches, the one that the most
  // failing cases match (broad ones aside): one number (a reduction's) may fit a coincidence as
  // well as the mistake.
  void resolve();
  Telling most_telling() const;
  std::string summary() const;
  // What separates the failing cases from the passing ones, the first of: a size multiple or
  // threshold (cases of next_size), a "name = number" threshold or parity, a phrase; "" for none.
  std::string separation() const;
  // "Every shape with k > 256 failed, ...": a "name = number" of the cases' contexts that
  // separates the failing cases from the passing ones; "" when none does.
  std::string threshold_of_failures() const;
  // "Every case with "B per tensor" failed, ...": a phrase of the contexts (one without a number)
  // in every failing case and in no passing one; "" when not exactly one is.
  std::string phrase_of_failures() const;
  void publish() const;  // for the crash handler: the case running, and the failures so far

  Where where_;
  std::string noun_;
  std::vector<Case> cases_;
  std::vector<Failure> failures_;
  std::set<std::string> ruled_out_;  // CheckResult::ruled_out of every case, passing ones too
  mutable bool reported_ = false;
  int exceptions_ = std::uncaught_exceptions();  // in flight when made: more at the end = thrown
};

/// The rank of a failed check, to compare failures: its Specificity, or mistake when it names one
/// of the lab's mistakes (pattern for a broad one, Mistake::broad), and at least observed.
Specificity rank(const CheckResult& result);

/// The body of main() for test executables: GoogleTest, with the seed printed after each failed
/// test, and the crash report installed (not under AddressSanitizer, whose own report has the
/// line).
int run_all_tests(int argc, char** argv);

/// The exit code of a test executable after a crash report: a failure, not a signal.
inline constexpr int kCrashExitCode = 3;

}  // namespace workbook::testing

/// Expects a check (see check.hpp) to pass; on failure prints its diagnosis.
#define EXPECT_CORRECT(check) EXPECT_TRUE(::workbook::testing::correct(check))
/// Like EXPECT_CORRECT, but stops the test on failure.
#define ASSERT_CORRECT(check) ASSERT_TRUE(::workbook::testing::correct(check))
/// Expects every case of a Cases to have passed; else prints the most telling failure first.
#define EXPECT_ALL_CORRECT(cases) EXPECT_TRUE((cases).verdict())
