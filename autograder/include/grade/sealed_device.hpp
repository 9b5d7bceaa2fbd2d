#pragma once
/// \file sealed_device.hpp
/// \brief The worker's side of a GPU lab's sealed tests: device copies of a call's buffers. The
/// checker sends host memory (shared with the worker) as for any lab; the worker copies each buffer
/// to the GPU, calls the student's kernel on the device copies, and copies them back, so that the
/// checker sees what the kernel wrote (inputs included: a kernel that writes its input is caught)
/// and the canaries around each device copy (a write past either end is caught too).
///
/// \code
/// WORKBOOK_SEALED_FUNCTION(square) {
///   DeviceCopy& x = DeviceCopy::of(call, 0, call.integer(2));  // x, 2nd number: its misalignment
///   DeviceCopy& y = DeviceCopy::of(call, 1, call.integer(3));
///   lab05::square(x.data(), y.data(), x.size());
///   DeviceCopy::finish({{&y, "y"}, {&x, "x"}});                  // wait, check, copy back
/// }
/// \endcode
///
/// A device copy is kept for the next call on the same region, as a program keeps its device
/// buffers: a kernel that caches its results by address meets new values at the same address.

#include <grade/sealed_worker.hpp>

#include <workbook/buffer.hpp>
#include <workbook/cuda/memory.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace workbook::sealed {

class DeviceCopy {
 public:
  static constexpr std::size_t kGuard = 64;  ///< canary elements on each side, in device memory

  /// The device copy of buffer argument `i` (floats) of `call`, `misalign` elements past a 256-byte
  /// boundary, uploaded from the call's region with fresh canaries around it.
  static DeviceCopy& of(const Call& call, std::size_t i, std::size_t misalign) {
    const std::span<float> host = call.out<float>(i);
    auto& copies = all();
    const auto key = std::make_tuple(host.data(), host.size(), misalign);
    auto found = copies.find(key);
    if (found == copies.end()) found = copies.emplace(key, DeviceCopy(host, misalign)).first;
    found->second.upload();
    return found->second;
  }

  /// Waits for the GPU (a kernel's fault or a launch error is reported here, as a thrown error),
  /// then copies each device copy back into its region and checks its canaries (named in messages).
  static void finish(std::initializer_list<std::pair<DeviceCopy*, const char*>> copies) {
    const cudaError_t launch = cudaGetLastError();
    const cudaError_t done = cudaDeviceSynchronize();
    if (launch != cudaSuccess || done != cudaSuccess)
      throw std::runtime_error(std::string("the kernel failed on the GPU: ") +
                               cudaGetErrorString(launch != cudaSuccess ? launch : done));
    for (const auto& [copy, name] : copies) copy->download(name);
  }

  float* data() { return storage_.data() + kGuard + misalign_; }  ///< device address of element 0
  std::size_t size() const { return host_.size(); }

 private:
  DeviceCopy(std::span<float> host, std::size_t misalign)
      : host_(host),
        misalign_(misalign),
        storage_(2 * kGuard + misalign + host.size()),
        whole_(storage_.size()) {}

  static std::map<std::tuple<float*, std::size_t, std::size_t>, DeviceCopy>& all() {
    static std::map<std::tuple<float*, std::size_t, std::size_t>, DeviceCopy> copies;
    return copies;
  }

  void upload() {
    std::fill(whole_.begin(), whole_.end(), Poison<float>::canary());
    std::copy(host_.begin(), host_.end(),
              whole_.begin() + static_cast<std::ptrdiff_t>(kGuard + misalign_));
    storage_.upload(whole_);
  }

  void download(const std::string& name) {
    storage_.download(whole_);
    std::size_t before = 0, after = 0;
    for (std::size_t j = 0; j < kGuard + misalign_; ++j)
      before += !Poison<float>::is_canary(whole_[j]);
    for (std::size_t j = kGuard + misalign_ + host_.size(); j < whole_.size(); ++j)
      after += !Poison<float>::is_canary(whole_[j]);
    std::copy_n(whole_.begin() + static_cast<std::ptrdiff_t>(kGuard + misalign_), host_.size(),
                host_.begin());
    if (before + after > 0)
      throw std::out_of_range(
          "the kernel wrote outside " + name + " in device memory: " + std::to_string(before) +
          " element(s) before its start, " + std::to_string(after) +
          " after its end. A thread whose index is past the end must not write: check the bounds "
          "of every thread, and the tail of a vectorized loop.");
  }

  std::span<float> host_;
  std::size_t misalign_;
  cuda::DeviceBuffer<float> storage_;
  std::vector<float> whole_;  // the device copy's host mirror, canaries included
};

}  // namespace workbook::sealed
