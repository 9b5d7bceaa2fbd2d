#include <workbook/cuda/timer.hpp>

#include "kernels.hpp"

#include <workbook/cuda/check.hpp>
#include <workbook/cuda/device.hpp>
#include <workbook/cuda/memory.hpp>

#include <memory>
#include <vector>

namespace workbook::cuda {
namespace {

// Events are created once per runner and reused: creating them costs microseconds of host time.
class EventPool {
 public:
  ~EventPool() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  cudaEvent_t at(std::size_t i) {
    while (events_.size() <= i) {
      cudaEvent_t e = nullptr;
      WORKBOOK_CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }
    return events_[i];
  }

 private:
  std::vector<cudaEvent_t> events_;
};

// The flush buffer: twice the L2 cache, allocated on first use and kept for the process's life.
struct FlushBuffer {
  DeviceBuffer<float> data, sink{1};
  int blocks = 0;
  FlushBuffer() {
    const DeviceInfo d = device_info();
    data = DeviceBuffer<float>(2 * d.l2_bytes / sizeof(float));
    WORKBOOK_CUDA_CHECK(cudaMemset(data.data(), 0, data.bytes()));
    blocks = d.sm_count * 8;
  }
};

}  // namespace

void flush_l2() {
  static FlushBuffer buffer;
  detail::read_all(buffer.data.data(), buffer.data.size(), buffer.sink.data(), buffer.blocks, nullptr);
}

void spin(std::uint64_t nanoseconds, cudaStream_t stream) { detail::spin(nanoseconds, stream); }

BatchRunner event_runner(std::function<void()> launch, L2 l2) {
  auto events = std::make_shared<EventPool>();
  return [launch = std::move(launch), l2, events](int count) {
    // Enqueue every run, then wait once: the GPU runs them back to back, and the host's own
    // overhead between launches stays out of the figures.
    for (int i = 0; i < count; ++i) {
      if (l2 == L2::flush) flush_l2();
      WORKBOOK_CUDA_CHECK(cudaEventRecord(events->at(2 * std::size_t(i)), nullptr));
      launch();
      WORKBOOK_CUDA_CHECK_LAUNCH(the timed kernel);
      WORKBOOK_CUDA_CHECK(cudaEventRecord(events->at(2 * std::size_t(i) + 1), nullptr));
    }
    std::vector<double> seconds;
    if (count <= 0) return seconds;
    WORKBOOK_CUDA_CHECK(cudaEventSynchronize(events->at(2 * std::size_t(count) - 1)));
    for (int i = 0; i < count; ++i) {
      float ms = 0;
      WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&ms, events->at(2 * std::size_t(i)), events->at(2 * std::size_t(i) + 1)));
      seconds.push_back(ms * 1e-3);
    }
    return seconds;
  };
}

Timing time_gpu(std::function<void()> launch, const TimingOptions& options, L2 l2) {
  return time_runs(event_runner(std::move(launch), l2), options);
}

}  // namespace workbook::cuda
