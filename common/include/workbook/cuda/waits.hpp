#pragma once
/// \file cuda/waits.hpp
/// \brief Whether this process is waiting for the GPU now: in which blocking CUDA call, since when.
///
/// The calls of CUDA's runtime that hold the host until the GPU's work is done
/// (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, cudaMemcpy, cudaMemcpy2D,
/// cudaMemset, cudaFree), made anywhere in a program linked with workbook::cuda (the harness or the
/// student's code), go through wrappers that the link puts in their place (`--wrap=cudaMemcpy`
/// and so on, set on workbook::cuda, as cuda/launches.hpp does for launches). A watchdog thread
/// reads the record without calling CUDA itself, which could wait behind the blocked call.

#include <chrono>
#include <optional>
#include <string>

namespace workbook::cuda {

/// A blocking CUDA call in progress.
struct GpuWait {
  std::string call;                             ///< "cudaMemcpy"
  std::chrono::steady_clock::time_point since;  ///< when it was called
};

/// The longest-running blocking CUDA call in progress in this process, if any.
std::optional<GpuWait> gpu_wait();

}  // namespace workbook::cuda
