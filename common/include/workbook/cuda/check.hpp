#pragma once
/// \file cuda/check.hpp
/// \brief Every CUDA call checked: `WORKBOOK_CUDA_CHECK(cudaMalloc(&p, bytes))` throws
/// workbook::cuda::Error naming the call, the file and the line, and what CUDA reported.
///
/// \code
/// WORKBOOK_CUDA_CHECK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice));
/// square_kernel<<<blocks, threads>>>(x, y, n);
/// WORKBOOK_CUDA_CHECK_LAUNCH(square_kernel);   // a bad launch configuration shows up here
/// \endcode
///
/// Kernels run asynchronously: an error *inside* a kernel (an out-of-bounds access) is reported by
/// the next call that waits for the GPU, whichever it is, and then by every later call (the
/// context is broken). The message says so, and points to compute-sanitizer, which names the line.

#include <cuda_runtime_api.h>

#include <functional>
#include <stdexcept>
#include <string>

namespace workbook::cuda {

/// A CUDA call that failed on a real device (never a reason to skip a test).
class Error : public std::runtime_error {
 public:
  /// `call` is the call as written, `file` and `line` where it is (shown relative to the
  /// repository).
  Error(cudaError_t code, const std::string& call, const char* file, int line);
  /// What CUDA returned, e.g. cudaErrorMemoryAllocation.
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

/// The harness's hook for a kernel that faulted (cudaErrorIllegalAddress,
/// cudaErrorMisalignedAddress, cudaErrorLaunchFailure, cudaErrorIllegalInstruction): what Error's
/// message says first (empty: nothing to add). GPU test executables install a re-run under
/// compute-sanitizer (cuda/memcheck.hpp).
void explain_kernel_faults_with(std::function<std::string()> explain);
/// The installed hook's answer, computed once per process (a fault breaks the CUDA context, so
/// every later error is the same one); "" without a hook.
std::string explain_kernel_fault();

/// The harness's hook for a launch CUDA refused as impossible (cudaErrorInvalidConfiguration, or
/// cudaErrorInvalidValue from a launch): which limit of this GPU the launch broke, from the launch
/// record (cuda/launches.hpp installs it); empty when it cannot tell.
void explain_impossible_launches_with(std::function<std::string()> explain);

/// Throws Error(code, call, file, line); the macros below call it.
[[noreturn]] void throw_error(cudaError_t code, const char* call, const char* file, int line);

}  // namespace workbook::cuda

/// Calls `call` (a CUDA runtime call returning cudaError_t) and throws workbook::cuda::Error
/// unless it returned cudaSuccess.
#define WORKBOOK_CUDA_CHECK(call)                                                     \
  do {                                                                                \
    const cudaError_t workbook_cuda_status = (call);                                  \
    if (workbook_cuda_status != cudaSuccess)                                          \
      ::workbook::cuda::throw_error(workbook_cuda_status, #call, __FILE__, __LINE__); \
  } while (0)

/// Right after a kernel launch: throws if the launch itself failed (too many threads per block,
/// too much shared memory, a grid of zero blocks, ...), naming the kernel.
#define WORKBOOK_CUDA_CHECK_LAUNCH(kernel)                                                    \
  do {                                                                                        \
    const cudaError_t workbook_cuda_status = cudaGetLastError();                              \
    if (workbook_cuda_status != cudaSuccess)                                                  \
      ::workbook::cuda::throw_error(workbook_cuda_status, "the launch of " #kernel, __FILE__, \
                                    __LINE__);                                                \
  } while (0)
