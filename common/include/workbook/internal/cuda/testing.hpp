#pragma once
/// \file internal/cuda/testing.hpp
/// \brief GoogleTest for GPU labs. Test executables link workbook::cuda_testing_main, whose main()
/// exits with "no CUDA device: skipped (...)" and code kSkipReturnCode on a machine without a GPU
/// or driver (CTest shows the tests as skipped), and otherwise runs every test.

#include <workbook/cuda/device.hpp>
#include <workbook/cuda/memory.hpp>
#include <workbook/skip.hpp>
#include <workbook/testing.hpp>

/// GoogleTest for GPU labs: main() that skips cleanly without a GPU.
namespace workbook::cuda::testing {

/// main() of a GPU test executable (see above).
int main(int argc, char** argv);

}  // namespace workbook::cuda::testing
