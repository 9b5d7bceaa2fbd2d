#include <workbook/cuda/device.hpp>

#include <workbook/cuda/check.hpp>
#include <workbook/skip.hpp>

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace workbook::cuda {

std::string DeviceInfo::fingerprint() const {
  return name + ", " + std::to_string(sm_count) + " SMs, sm_" + std::to_string(cc_major) +
         std::to_string(cc_minor);
}

std::string DeviceInfo::describe() const {
  auto version = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  };
  return fingerprint() + ", " + std::to_string(memory_bytes >> 30) + " GiB, L2 " +
         std::to_string(l2_bytes >> 20) + " MiB, driver " + version(driver_version) + ", runtime " +
         version(runtime_version);
}

std::optional<std::string> why_no_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  cudaGetLastError();  // the status is ours to handle; leave no error behind for later checks
  if (status == cudaSuccess) {
    if (count > 0) return std::nullopt;
    return "the CUDA runtime found no GPU";
  }
  if (status == cudaErrorNoDevice) return "no CUDA-capable GPU in this machine (cudaErrorNoDevice)";
  if (status == cudaErrorInsufficientDriver) {
    // The runtime says the driver is too old, and reports version 0 when there is none at all. Only
    // the latter is "no driver"; an old driver on a machine with a GPU is a problem to fix.
    int driver = 0;
    cudaDriverGetVersion(&driver);
    if (driver == 0) return "no NVIDIA driver is installed (cudaErrorInsufficientDriver)";
  }
  throw Error(status, "cudaGetDeviceCount(&count), the device query,", __FILE__, __LINE__);
}

std::string skip_message(const std::string& reason) {
  return "no CUDA device: skipped (" + reason + ")";
}

void require_device() {
  const std::optional<std::string> why = why_no_device();
  if (!why) return;
  const char* required = std::getenv("WORKBOOK_REQUIRE_GPU");
  if (required != nullptr && std::string_view(required) == "1")
    throw std::runtime_error(
        "WORKBOOK_REQUIRE_GPU=1, but " + *why +
        ": the GPU tests would all be skipped. Check the driver with nvidia-smi.");
  throw Skipped(skip_message(*why));
}

DeviceInfo device_info() {
  DeviceInfo d;
  WORKBOOK_CUDA_CHECK(cudaGetDevice(&d.index));
  cudaDeviceProp p{};
  WORKBOOK_CUDA_CHECK(cudaGetDeviceProperties(&p, d.index));
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.memory_bytes = p.totalGlobalMem;
  d.shared_per_sm_bytes = p.sharedMemPerMultiprocessor;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  WORKBOOK_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  WORKBOOK_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

}  // namespace workbook::cuda
