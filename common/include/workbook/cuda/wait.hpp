#pragma once
/// \file cuda/wait.hpp
/// \brief Waiting for the GPU, with a deadline in the tests: a kernel that never ends is reported
/// within seconds, by the launch that started it, instead of after ctest's timeout.
///
/// The GPU test executables set a deadline (10 s, or $WORKBOOK_GPU_TIMEOUT seconds); the harness
/// calls wait_for_gpu() before every copy back from the GPU (cuda/memory.hpp), the first call that
/// would otherwise block forever behind a kernel that spins. Past the deadline the process prints
/// what it observed and exits, which frees the GPU for the tests that follow. Without a deadline
/// (the perf and sealed workers, whose callers time them) wait_for_gpu() returns at once and the
/// copy waits as usual.

#include <functional>
#include <string>

namespace workbook::cuda {

/// Sets the deadline of wait_for_gpu() in seconds (0: none), and what to call the running test
/// in its report (empty: nothing).
void set_gpu_wait_deadline(double seconds, std::function<std::string()> test_name = {});

/// The deadline set, in seconds (0: none).
double gpu_wait_deadline();

/// Waits until the work queued on the default stream so far has finished, or, with a deadline,
/// until it passes: then reports the kernel that did not finish (`while_doing` says what the
/// harness was about to do) and ends the process with exit code 1.
void wait_for_gpu(const char* while_doing);

/// The report of a kernel that did not finish within `seconds`: the last launch observed, what
/// usually makes a kernel run forever, and the next step.
std::string unfinished_kernel_report(double seconds, const std::string& while_doing,
                                     const std::string& test_name);

}  // namespace workbook::cuda
