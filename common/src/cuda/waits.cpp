// The record behind cuda/waits.hpp: wrappers of the blocking calls of CUDA's runtime, which the
// link options of workbook::cuda (--wrap=cudaMemcpy and so on) put in their place.
#include <workbook/cuda/waits.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

namespace workbook::cuda {
namespace {

struct Entry {
  std::thread::id thread;
  const char* call;
  std::chrono::steady_clock::time_point since;
};

struct Waits {
  std::mutex mutex;
  std::vector<Entry> active;  // in the order called: one per thread at most
};

Waits& waits() {
  static Waits w;
  return w;
}

// Noted for the time of one call; a record that cannot be kept never changes the call.
class Waiting {
 public:
  explicit Waiting(const char* call) {
    try {
      const std::lock_guard lock(waits().mutex);
      waits().active.push_back(
          {std::this_thread::get_id(), call, std::chrono::steady_clock::now()});
      noted_ = true;
    } catch (...) {
    }
  }
  ~Waiting() {
    if (!noted_) return;
    try {
      Waits& w = waits();
      const std::lock_guard lock(w.mutex);
      const auto it = std::find_if(w.active.begin(), w.active.end(), [](const Entry& e) {
        return e.thread == std::this_thread::get_id();
      });
      if (it != w.active.end()) w.active.erase(it);
    } catch (...) {
    }
  }
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;

 private:
  bool noted_ = false;
};

}  // namespace

std::optional<GpuWait> gpu_wait() {
  Waits& w = waits();
  const std::lock_guard lock(w.mutex);
  if (w.active.empty()) return std::nullopt;
  return GpuWait{w.active.front().call, w.active.front().since};
}

}  // namespace workbook::cuda

// The real entry points (declared with the runtime's own types) and their wrappers.
extern "C" {
decltype(cudaDeviceSynchronize) __real_cudaDeviceSynchronize;
decltype(cudaStreamSynchronize) __real_cudaStreamSynchronize;
decltype(cudaEventSynchronize) __real_cudaEventSynchronize;
decltype(cudaMemcpy) __real_cudaMemcpy;
decltype(cudaMemcpy2D) __real_cudaMemcpy2D;
decltype(cudaMemset) __real_cudaMemset;
decltype(cudaFree) __real_cudaFree;

cudaError_t __wrap_cudaDeviceSynchronize() {
  const workbook::cuda::Waiting w("cudaDeviceSynchronize");
  return __real_cudaDeviceSynchronize();
}
cudaError_t __wrap_cudaStreamSynchronize(cudaStream_t stream) {
  const workbook::cuda::Waiting w("cudaStreamSynchronize");
  return __real_cudaStreamSynchronize(stream);
}
cudaError_t __wrap_cudaEventSynchronize(cudaEvent_t event) {
  const workbook::cuda::Waiting w("cudaEventSynchronize");
  return __real_cudaEventSynchronize(event);
}
cudaError_t __wrap_cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  const workbook::cuda::Waiting w("cudaMemcpy");
  return __real_cudaMemcpy(dst, src, count, kind);
}
cudaError_t __wrap_cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch,
                                size_t width, size_t height, cudaMemcpyKind kind) {
  const workbook::cuda::Waiting w("cudaMemcpy2D");
  return __real_cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
cudaError_t __wrap_cudaMemset(void* ptr, int value, size_t count) {
  const workbook::cuda::Waiting w("cudaMemset");
  return __real_cudaMemset(ptr, value, count);
}
cudaError_t __wrap_cudaFree(void* ptr) {
  const workbook::cuda::Waiting w("cudaFree");
  return __real_cudaFree(ptr);
}
}
