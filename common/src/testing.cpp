#include <workbook/testing.hpp>

#include <iostream>

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

namespace {

class PrintSeedOnFailure : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (!test.result()->Failed()) return;
    std::cout << "  Inputs came from WORKBOOK_SEED=" << base_seed()
              << "; replay them with: WORKBOOK_SEED=" << base_seed() << " ctest -R '"
              << test.test_suite_name() << "." << test.name() << "'\n";
  }
};

}  // namespace

int run_all_tests(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new PrintSeedOnFailure);
  return RUN_ALL_TESTS();
}

}  // namespace workbook::testing
