#pragma once
/// \file cuda/memory.hpp
/// \brief Device memory for tests and perf cases: DeviceBuffer (cudaMalloc'd, freed on scope exit)
/// and DeviceOutput, an output with the poison and the guard zones of workbook::GuardedBuffer.
///
/// \code
/// auto x = workbook::cuda::to_device<float>(host_x);      // upload
/// workbook::cuda::DeviceOutput<float> y(n);                // poisoned, canaries on both sides
/// lab05::square(x.data(), y.data(), n);
/// EXPECT_CORRECT(check_square(host_x, y.fetch()));         // download, then the usual check
/// \endcode

#include <workbook/buffer.hpp>
#include <workbook/cuda/check.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace workbook::cuda {

/// n elements of device memory (cudaMalloc: 256-byte aligned), freed when it goes out of scope.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;  ///< no memory: data() is null, size() 0
  /// n uninitialised elements; throws cuda::Error when cudaMalloc fails (out of device memory).
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n > 0) WORKBOOK_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), n * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);  // no check: a destructor must not throw
  }
  /// Takes over `other`'s memory, leaving it empty.
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), n_(std::exchange(other.n_, 0)) {}
  /// Swaps memory with `other`, which frees this buffer's old memory when it goes.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(n_, other.n_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() { return data_; }                           ///< device address: pass it to kernels only
  const T* data() const { return data_; }               ///< device address, read-only
  std::size_t size() const { return n_; }               ///< elements
  std::size_t bytes() const { return n_ * sizeof(T); }  ///< size() * sizeof(T)

  /// Copies `host` into elements [offset, offset + host.size()) (synchronously).
  void upload(std::span<const T> host, std::size_t offset = 0) {
    check_range(offset, host.size());
    if (!host.empty())
      WORKBOOK_CUDA_CHECK(
          cudaMemcpy(data_ + offset, host.data(), host.size_bytes(), cudaMemcpyHostToDevice));
  }
  /// Copies elements [offset, offset + host.size()) into `host` (waits for the GPU first).
  void download(std::span<T> host, std::size_t offset = 0) const {
    check_range(offset, host.size());
    if (!host.empty())
      WORKBOOK_CUDA_CHECK(
          cudaMemcpy(host.data(), data_ + offset, host.size_bytes(), cudaMemcpyDeviceToHost));
  }
  /// The whole buffer, downloaded into a new host vector (waits for the GPU first).
  std::vector<T> to_host() const {
    std::vector<T> host(n_);
    download(host);
    return host;
  }

 private:
  void check_range(std::size_t offset, std::size_t count) const {
    if (offset > n_ || count > n_ - offset)
      throw std::out_of_range("DeviceBuffer: copy outside the buffer");
  }
  T* data_ = nullptr;
  std::size_t n_ = 0;
};

/// A device copy of `host`, `misalign` elements past cudaMalloc's 256-byte alignment (to test
/// kernels on inputs that do not start on a 16-byte boundary). The data starts at data() +
/// misalign.
template <class T>
DeviceBuffer<T> to_device(std::span<const T> host, std::size_t misalign = 0) {
  DeviceBuffer<T> d(host.size() + misalign);
  d.upload(host, misalign);
  return d;
}

/// n floats drawn uniform in [lo, hi) on the host and uploaded: a bench's input (a test keeps the
/// host copy too, for the oracle).
inline DeviceBuffer<float> uniform_on_device(std::size_t n, Rng& rng, double lo, double hi) {
  AlignedVector<float> host(n);
  fill_uniform(host, rng, lo, hi);
  return to_device<float>(host);
}

/// An output on the device, checked like a GuardedBuffer: n elements between two canary zones of
/// GuardedBuffer<T>::kGuard elements, all mirrored on the host. poison() fills the device copy with
/// the poison value (and the canaries around it); fetch() brings everything back, so that
/// check_elementwise sees unwritten elements and writes past either end. `misalign` shifts the
/// start by that many elements past a 256-byte boundary.
template <class T>
class DeviceOutput {
 public:
  /// n elements on the device, poisoned, between canaries; throws cuda::Error when the device
  /// memory cannot be allocated or written.
  explicit DeviceOutput(std::size_t n, std::size_t misalign = 0)
      : host_(n, misalign),
        offset_(GuardedBuffer<T>::kGuard + misalign),
        storage_(offset_ + n + GuardedBuffer<T>::kGuard) {
    poison();
  }

  T* data() { return storage_.data() + offset_; }    ///< device address of element 0
  std::size_t size() const { return host_.size(); }  ///< n, the elements a kernel may write

  /// Poisons the output on the device, and rewrites the canaries around it (a kernel that wrote
  /// past the end before must not leave its mark on the next check).
  void poison() {
    host_.poison();
    const std::span<T> whole = whole_host();
    std::fill(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(offset_),
              Poison<T>::canary());
    std::fill(whole.end() - static_cast<std::ptrdiff_t>(GuardedBuffer<T>::kGuard), whole.end(),
              Poison<T>::canary());
    storage_.upload(whole);
  }
  /// Waits for the GPU, copies the output and its guard zones back, and returns the host mirror.
  const GuardedBuffer<T>& fetch() {
    storage_.download(whole_host());
    return host_;
  }
  /// The host mirror as of the last poison() or fetch().
  const GuardedBuffer<T>& host() const { return host_; }

 private:
  // The host mirror's storage, canaries included: GuardedBuffer keeps them right around data().
  std::span<T> whole_host() { return {host_.data() - offset_, storage_.size()}; }

  GuardedBuffer<T> host_;
  std::size_t offset_;
  DeviceBuffer<T> storage_;
};

}  // namespace workbook::cuda
