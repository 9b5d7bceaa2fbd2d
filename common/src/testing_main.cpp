// main() of every test executable: GoogleTest, plus the seed printed with each failure.
#include <workbook/testing.hpp>

int main(int argc, char** argv) {
  return workbook::testing::run_all_tests(argc, argv);
}
