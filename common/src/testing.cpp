#include <workbook/testing.hpp>

namespace workbook::testing {

Rng rng() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = test ? std::string(test->test_suite_name()) + "." + test->name() : "";
  return Rng(seed_for(name));
}

::testing::AssertionResult correct(const CheckResult& result) {
  if (result.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\n" << result.report();
}

}  // namespace workbook::testing
