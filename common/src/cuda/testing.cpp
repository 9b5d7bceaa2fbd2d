#include <workbook/internal/cuda/testing.hpp>

#include <cstdlib>
#include <iostream>
#include <string_view>

namespace workbook::cuda::testing {

int main(int argc, char** argv) {
  // Listing the tests needs no GPU (CTest and IDEs list them at build time).
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]).rfind("--gtest_list_tests", 0) == 0)
      return workbook::testing::run_all_tests(argc, argv);
  try {
    require_device();
  } catch (const Skipped& e) {
    std::cout << e.what() << "\n";
    return kSkipReturnCode;
  } catch (const std::exception& e) {  // a real device in a bad state, or WORKBOOK_REQUIRE_GPU=1
    std::cout << "FAILED before any test ran: " << e.what() << "\n";
    return 1;
  }
  return workbook::testing::run_all_tests(argc, argv);
}

}  // namespace workbook::cuda::testing
