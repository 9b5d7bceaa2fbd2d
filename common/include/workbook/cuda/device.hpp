#pragma once
/// \file cuda/device.hpp
/// \brief Which GPU this is, and whether there is one: GPU tests and perf cases skip cleanly on a
/// machine without a GPU or without its driver (CI), and fail on any other CUDA error.
///
/// Set WORKBOOK_REQUIRE_GPU=1 on a machine that has a GPU: then a missing device fails instead of
/// skipping, so that a broken driver cannot pass a test suite by skipping all of it.

#include <cstddef>
#include <optional>
#include <string>

/// The GPU side of the harness (labs 05 and 06): device query and skip, checked CUDA calls,
/// device memory with guards, the GPU timer, the GPU's ceilings, and Nsight Compute's view.
namespace workbook::cuda {

/// What the harness records about the GPU it measures on.
struct DeviceInfo {
  int index = 0;                        ///< the CUDA device number (cudaSetDevice)
  std::string name;                     ///< "NVIDIA H100 80GB HBM3"
  int sm_count = 0;                     ///< streaming multiprocessors
  int cc_major = 0;                     ///< compute capability, major (9 for Hopper)
  int cc_minor = 0;                     ///< compute capability, minor (0 for the H100)
  std::size_t l2_bytes = 0;             ///< L2 cache: the timer flushes twice this between runs
  std::size_t memory_bytes = 0;         ///< device memory
  std::size_t shared_per_sm_bytes = 0;  ///< shared memory per SM, for the blocks resident on it
  int max_threads_per_sm = 0;  ///< resident threads per SM: with the block size, bounds occupancy
  int driver_version = 0;      ///< as CUDA reports it: 13000 is 13.0
  int runtime_version = 0;     ///< the CUDA runtime linked in, same encoding

  /// "NVIDIA H100 80GB HBM3, 132 SMs, sm_90": what a cache of GPU ceilings is valid for.
  std::string fingerprint() const;
  /// One line for a report: the fingerprint, memory, L2, driver and runtime versions.
  std::string describe() const;
};

/// nullopt when a CUDA device is usable; otherwise why not, when the reason is that this machine
/// has no GPU or no NVIDIA driver. Any other failure (a driver too old for this runtime, a device
/// in a bad state) throws workbook::cuda::Error: that is a problem to fix, not a reason to skip.
std::optional<std::string> why_no_device();

/// The line a skipped GPU test prints: "no CUDA device: skipped (<reason>)".
std::string skip_message(const std::string& reason);

/// Throws workbook::Skipped(skip_message(...)) when why_no_device() gives a reason, unless
/// WORKBOOK_REQUIRE_GPU=1, when it throws std::runtime_error instead.
void require_device();

/// The current device (call require_device() first).
DeviceInfo device_info();

}  // namespace workbook::cuda
