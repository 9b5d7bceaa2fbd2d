// Lab 05 Part B visible tests: your time_launches against work of known length. Each test catches
// one classic mistake and says which (the checks are in timing_checks.hpp).
#include "square.hpp"
#include "timing_checks.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

namespace checks = lab05::timing_checks;

TEST(TimeLaunches, MeasuresWorkOfKnownLength) {
  EXPECT_TRUE(checks::measures_work_of_known_length(lab05::time_launches));
}

TEST(TimeLaunches, WarmsUpAndLeavesTheFirstLaunchOut) {
  EXPECT_TRUE(checks::warms_up_and_leaves_the_first_launch_out(lab05::time_launches));
}

TEST(TimeLaunches, TimesEachRunOnItsOwn) {
  EXPECT_TRUE(checks::times_each_run_on_its_own(lab05::time_launches));
}

TEST(TimeLaunches, ReturnsWhenTheWorkHasFinished) {
  EXPECT_TRUE(checks::returns_when_the_work_has_finished(lab05::time_launches));
}

TEST(TimeLaunches, RejectsBadArguments) {
  EXPECT_THROW(lab05::time_launches({}, 1, 1), std::invalid_argument);
  EXPECT_THROW(lab05::time_launches([] {}, -1, 1), std::invalid_argument);
  EXPECT_THROW(lab05::time_launches([] {}, 0, 0), std::invalid_argument);
}

}  // namespace
