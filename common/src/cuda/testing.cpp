#include <workbook/cuda/launches.hpp>
#include <workbook/cuda/memcheck.hpp>
#include <workbook/internal/cuda/testing.hpp>
#include <workbook/internal/cuda/watchdog.hpp>
#include <workbook/seed.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

namespace workbook::cuda::testing {
namespace {

// Set in the environment of the re-run, so that it does not re-run itself.
constexpr const char* kRerun = "WORKBOOK_MEMCHECK_RERUN";

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A kernel of the running test faulted: run that test again, alone, with the same seed, under
// compute-sanitizer's memcheck, and explain the first invalid access it reports.
std::string explain_by_memcheck() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  if (test == nullptr) return "";
  const std::string name = std::string(test->test_suite_name()) + "." + test->name();
  const std::string sanitizer = find_compute_sanitizer();
  if (sanitizer.empty())
    return "a kernel failed while it ran (an invalid memory access), and compute-sanitizer, "
           "which would name the kernel, the line and the address, was not found. Install it "
           "(it comes with the CUDA Toolkit, in its bin folder next to nvcc; or set "
           "WORKBOOK_COMPUTE_SANITIZER to its path), then run this test again.";
  std::optional<Launch> launch = last_launch();

  char log[] = "/tmp/workbook-memcheck-XXXXXX";
  const int fd = mkstemp(log);
  if (fd < 0) return "";
  close(fd);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string seed = std::to_string(base_seed());
  const std::string command = std::string(kRerun) + "=1 WORKBOOK_SEED=" + seed + " timeout 120 " +
                              quoted(sanitizer) + " --tool memcheck --print-limit 64 --log-file " +
                              quoted(log) + " " + quoted(self) + " " +
                              quoted("--gtest_filter=" + name) + " >/dev/null 2>&1";
  std::cout << "[ memcheck ] a kernel faulted: re-running " << name
            << " under compute-sanitizer to find the access" << std::endl;
  const int status = std::system(command.c_str());  // the test fails there too: read the report
  std::ifstream in(log);
  std::stringstream report;
  report << in.rdbuf();
  std::remove(log);
  if (report.str().empty())
    return "a kernel failed while it ran, and compute-sanitizer could not re-run this test to find "
           "the access (`" +
           sanitizer + " --tool memcheck ...` ended with status " + std::to_string(status) +
           " and wrote no report). Run ctest -L sanitizer.";
  std::vector<MemoryFault> faults = parse_memcheck(report.str());
  const std::string rerun = "compute-sanitizer --tool memcheck " + self +
                            " --gtest_filter=" + name + " with WORKBOOK_SEED=" + seed;
  if (faults.empty())
    return "a kernel failed while it ran, and compute-sanitizer's memcheck found no invalid "
           "access when it re-ran this test (" +
           rerun +
           "): the failure did not happen again under it. Run the test alone, and under the "
           "other tools (ctest -L sanitizer: racecheck, synccheck).";
  // The launch observed last is the faulting kernel's only if the fault lies inside it.
  const MemoryFault& f = faults.front();
  bool inside = launch.has_value();
  for (int k = 0; k < 3 && inside; ++k)
    inside = f.thread[k] < launch->block[k] && f.block[k] < launch->grid[k];
  if (!inside) launch.reset();
  return explain_faults(faults, launch) + " (Found by re-running this test: " + rerun + ".)";
}

// The hook itself: an explanation, or "" (the plain CUDA message) when the re-run cannot be made.
std::string rerun_under_memcheck() {
  try {
    return explain_by_memcheck();
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

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
  if (std::getenv(kRerun) == nullptr) explain_kernel_faults_with(rerun_under_memcheck);
  // A kernel that never ends is reported within seconds, not by ctest's timeout.
  start_gpu_watchdog(gpu_watchdog_seconds());
  return workbook::testing::run_all_tests(argc, argv);
}

}  // namespace workbook::cuda::testing
