// main() of every test executable: GoogleTest, plus the seed printed with each failure.
#include <workbook/seed.hpp>

#include <gtest/gtest.h>

#include <iostream>

namespace {

class PrintSeedOnFailure : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (!test.result()->Failed()) return;
    std::cout << "  Inputs came from WORKBOOK_SEED=" << workbook::base_seed()
              << "; replay them with: WORKBOOK_SEED=" << workbook::base_seed() << " ctest -R '"
              << test.test_suite_name() << "." << test.name() << "'\n";
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new PrintSeedOnFailure);
  return RUN_ALL_TESTS();
}
