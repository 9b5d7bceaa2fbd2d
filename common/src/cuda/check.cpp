#include <workbook/cuda/check.hpp>

#include <workbook/not_implemented.hpp>

#include <mutex>
#include <optional>

namespace workbook::cuda {
namespace {

struct FaultHook {
  std::mutex mutex;
  std::function<std::string()> explain;
  std::optional<std::string> answer;
};

FaultHook& fault_hook() {
  static FaultHook h;
  return h;
}

// Which limit an impossible launch broke (see explain_impossible_launches_with).
struct LaunchHook {
  std::mutex mutex;
  std::function<std::string()> explain;
};

LaunchHook& launch_hook() {
  static LaunchHook h;
  return h;
}

std::string explain_impossible_launch() {
  LaunchHook& h = launch_hook();
  const std::lock_guard lock(h.mutex);
  return h.explain ? h.explain() : "";
}

std::string message(cudaError_t code, const std::string& call, const char* file, int line) {
  std::string m = "CUDA error at " + repository_path(file) + ":" + std::to_string(line) + ": " +
                  call + " failed: " + cudaGetErrorString(code) + " (" + cudaGetErrorName(code) +
                  ")";
  switch (code) {
    case cudaErrorIllegalAddress:
    case cudaErrorMisalignedAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
      // The harness's explanation (a re-run under compute-sanitizer, in a GPU test) comes first:
      // the call that reports the fault is only the first one that waited for the GPU.
      if (const std::string why = explain_kernel_fault(); !why.empty())
        return why + "\n  (CUDA reported the fault, " + cudaGetErrorString(code) + " (" +
               cudaGetErrorName(code) + "), to " + call + " at " + repository_path(file) + ":" +
               std::to_string(line) + ", the first call that waited for the GPU.)";
      m += ". A kernel failed while it ran; the call that reports it is only the first one that "
           "waited "
           "for the GPU. Find the kernel and the line with compute-sanitizer: ctest -L sanitizer";
      break;
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidValue:
      // CUDA reports an impossible launch configuration as either, depending on the version.
      if (call.rfind("the launch of", 0) == 0) {
        if (const std::string why = explain_impossible_launch(); !why.empty())
          m += ". The launch configuration is impossible: " + why;
        else
          m += ". The launch configuration is impossible: at most 1024 threads per block, at "
               "least one block, grid.y and grid.z at most 65535, and no more shared memory than "
               "the GPU has";
      }
      break;
    case cudaErrorMemoryAllocation:
      m += ". The GPU's memory is full: free what you allocate, or allocate once outside the loop";
      break;
    default:
      break;
  }
  return m;
}

}  // namespace

void explain_kernel_faults_with(std::function<std::string()> explain) {
  FaultHook& h = fault_hook();
  const std::lock_guard lock(h.mutex);
  h.explain = std::move(explain);
  h.answer.reset();
}

void explain_impossible_launches_with(std::function<std::string()> explain) {
  LaunchHook& h = launch_hook();
  const std::lock_guard lock(h.mutex);
  h.explain = std::move(explain);
}

std::string explain_kernel_fault() {
  FaultHook& h = fault_hook();
  const std::lock_guard lock(h.mutex);
  if (!h.explain) return "";
  if (!h.answer) h.answer = h.explain();
  return *h.answer;
}

Error::Error(cudaError_t code, const std::string& call, const char* file, int line)
    : std::runtime_error(message(code, call, file, line)), code_(code) {}

void throw_error(cudaError_t code, const char* call, const char* file, int line) {
  throw Error(code, call, file, line);
}

}  // namespace workbook::cuda
