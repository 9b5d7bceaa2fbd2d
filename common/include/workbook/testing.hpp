#pragma once
/// \file testing.hpp
/// \brief GoogleTest glue: seeded inputs per test, and checks as assertions.
///
/// Tests link workbook::testing_main, whose main() prints the seed with every failure so that
/// `WORKBOOK_SEED=<seed> ctest -R <test>` replays the same inputs.

#include <workbook/check.hpp>
#include <workbook/seed.hpp>

#include <gtest/gtest.h>

/// GoogleTest glue: seeded inputs per test, checks as assertions, the tests' main().
namespace workbook::testing {

/// The generator for the running test, seeded from WORKBOOK_SEED and the test's full name.
Rng rng();

/// A CheckResult as a GoogleTest assertion, with its report as the failure message.
::testing::AssertionResult correct(const CheckResult& result);

/// The body of main() for test executables: GoogleTest, with the seed printed after each failed
/// test so that `WORKBOOK_SEED=<seed> ctest -R <test>` replays it.
int run_all_tests(int argc, char** argv);

}  // namespace workbook::testing

/// Expects a check (see check.hpp) to pass; on failure prints its diagnosis.
#define EXPECT_CORRECT(check) EXPECT_TRUE(::workbook::testing::correct(check))
/// Like EXPECT_CORRECT, but stops the test on failure.
#define ASSERT_CORRECT(check) ASSERT_TRUE(::workbook::testing::correct(check))
