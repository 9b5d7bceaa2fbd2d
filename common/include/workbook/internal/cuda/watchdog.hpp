#pragma once
/// \file internal/cuda/watchdog.hpp
/// \brief A kernel that never ends, reported within seconds instead of by ctest's timeout.
///
/// The test's own thread cannot report it: it is blocked waiting for the GPU, in the harness or in
/// the student's own cudaDeviceSynchronize(). So a thread of its own watches the blocking CUDA
/// calls in progress (cuda/waits.hpp): one that has waited the deadline with no launch since is a
/// kernel that does not finish. It prints what it observed (the test, the case, the last launch,
/// the call that waits, what makes a kernel run forever) and ends the process, which frees the
/// GPU for the tests that follow. A test slow on the host, outside any CUDA call, is not its
/// business.

#include <workbook/cuda/launches.hpp>

#include <optional>
#include <string>

namespace workbook::cuda::testing {

/// The deadline of the GPU test executables, in seconds from the last launch: 8 (a hang is
/// reported within 10 s), or $WORKBOOK_GPU_TIMEOUT; 0 (no watchdog) under compute-sanitizer (its
/// kernels are slower), in the memcheck re-run, or with a debugger attached.
double gpu_watchdog_seconds();

/// Starts the watchdog with `seconds` (nothing when 0). Once per process.
void start_gpu_watchdog(double seconds);

/// The report of work that did not finish within `seconds` of `last` (the last launch, if any
/// was observed) while `call` waited for it. `running` is what the crash report names (the test
/// and case running), `edit` the next step ("edit labs/05_cuda_square/square.cu").
std::string unfinished_kernel_report(double seconds, const std::optional<Launch>& last,
                                     const std::string& call, const std::string& running,
                                     const std::string& edit);

}  // namespace workbook::cuda::testing
