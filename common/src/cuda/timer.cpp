#include <workbook/cuda/timer.hpp>

#include "kernels.hpp"

#include <workbook/cuda/check.hpp>
#include <workbook/cuda/device.hpp>
#include <workbook/cuda/memory.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <cupti.h>
#include <dlfcn.h>

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

// CUPTI, loaded at run time: the workbook builds and runs where the toolkit lacks it, and falls
// back to events where it is present but taken (ncu and compute-sanitizer subscribe to it
// themselves). It records the start and end of every kernel, memcpy and memset; each timed run is
// enqueued between two marker kernels of our own (detail::mark_run), which tell the runs apart, and
// from the flushes between them, in the records of one stream.
class Cupti {
 public:
  // The process's CUPTI, ready to record; null when it cannot be used.
  static Cupti* instance() {
    static Cupti* cupti = [] {
      auto* c = new Cupti;
      if (c->start()) return c;
      delete c;
      return static_cast<Cupti*>(nullptr);
    }();
    return cupti;
  }

  // Seconds of each of the last `count` runs, from the start of its first GPU operation to the end
  // of its last; empty when CUPTI recorded nothing at all (it is then not really available).
  std::vector<double> collect(int count) {
    if (flush_all_(1) != 0) return {};  // 1 = CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
    std::lock_guard lock(mutex_);
    std::sort(spans_.begin(), spans_.end(),
              [](const Span& a, const Span& b) { return a.start < b.start; });
    std::vector<double> seconds;
    std::uint64_t begin = 0, end = 0;
    bool inside = false;
    for (const Span& s : spans_) {
      if (s.what == Span::begin_run) {
        inside = true;
        begin = UINT64_MAX;
        end = 0;
      } else if (s.what == Span::end_run) {
        if (inside && end > 0) seconds.push_back(static_cast<double>(end - begin) * 1e-9);
        if (inside && end == 0)
          throw std::runtime_error(
              "the timed function enqueued no GPU work (no kernel, memcpy or memset)");
        inside = false;
      } else if (inside) {
        begin = std::min(begin, s.start);
        end = std::max(end, s.end);
      }
    }
    spans_.clear();
    if (seconds.size() != static_cast<std::size_t>(count)) return {};
    return seconds;
  }

 private:
  struct Span {
    enum What { work, begin_run, end_run } what;
    std::uint64_t start, end;
  };
  using Result = int;  // CUptiResult; 0 is CUPTI_SUCCESS
  Result (*register_)(CUpti_BuffersCallbackRequestFunc,
                      CUpti_BuffersCallbackCompleteFunc) = nullptr;
  Result (*enable_)(CUpti_ActivityKind) = nullptr;
  Result (*next_record_)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  Result (*flush_all_)(uint32_t) = nullptr;

  bool start() {
    void* library = nullptr;
    for (const char* name :
         {"libcupti.so." WORKBOOK_CUDA_MAJOR, "libcupti.so", WORKBOOK_CUPTI_FALLBACK_PATH}) {
      if (*name != '\0' && (library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    if (library == nullptr) return false;
    auto symbol = [&](auto& function, const char* name) {
      function =
          reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      return function != nullptr;
    };
    if (!symbol(register_, "cuptiActivityRegisterCallbacks") ||
        !symbol(enable_, "cuptiActivityEnable") ||
        !symbol(next_record_, "cuptiActivityGetNextRecord") ||
        !symbol(flush_all_, "cuptiActivityFlushAll"))
      return false;
    if (register_(&Cupti::requested, &Cupti::completed) != 0) return false;
    for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
      if (enable_(kind) != 0) return false;  // e.g. another subscriber (a profiler) holds CUPTI
    return true;
  }

  static void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *size = std::size_t{1} << 20;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
    *max_records = 0;
  }
  static void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    Cupti* self = instance_for_callbacks();
    if (self != nullptr) {
      std::lock_guard lock(self->mutex_);
      CUpti_Activity* record = nullptr;
      while (self->next_record_(buffer, valid, &record) == 0) {
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
          const Span::What what = k->name == nullptr                             ? Span::work
                                  : std::strcmp(k->name, detail::kBeginRun) == 0 ? Span::begin_run
                                  : std::strcmp(k->name, detail::kEndRun) == 0   ? Span::end_run
                                                                                 : Span::work;
          self->spans_.push_back({what, k->start, k->end});
        } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
          self->spans_.push_back({Span::work, m->start, m->end});
        } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
          self->spans_.push_back({Span::work, m->start, m->end});
        }
      }
    }
    std::free(buffer);  // CUPTI unusable after all: drop what it recorded
  }
  // The callbacks are plain functions: they reach the one instance through this.
  static Cupti* instance_for_callbacks() {
    static Cupti* const self = instance();
    return self;
  }

  std::mutex mutex_;
  std::vector<Span> spans_;
};

// Set when CUPTI recorded nothing where it should have: the process then times with events.
bool cupti_failed = false;

}  // namespace

void flush_l2() {
  static FlushBuffer buffer;
  detail::read_all(buffer.data.data(), buffer.data.size(), buffer.sink.data(), buffer.blocks,
                   nullptr);
}

void spin(std::uint64_t nanoseconds, cudaStream_t stream) {
  detail::spin(nanoseconds, stream);
}

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
      WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&ms, events->at(2 * std::size_t(i)),
                                               events->at(2 * std::size_t(i) + 1)));
      seconds.push_back(ms * 1e-3);
    }
    return seconds;
  };
}

BatchRunner kernel_runner(std::function<void()> launch, L2 l2) {
  Cupti* cupti = cupti_failed ? nullptr : Cupti::instance();
  if (cupti == nullptr) return {};
  BatchRunner events = event_runner(launch, l2);
  return [launch = std::move(launch), l2, cupti, events](int count) {
    if (cupti_failed) return events(count);
    for (int i = 0; i < count; ++i) {
      if (l2 == L2::flush) flush_l2();
      detail::mark_run(true, nullptr);
      launch();
      WORKBOOK_CUDA_CHECK_LAUNCH(the timed kernel);
      detail::mark_run(false, nullptr);
    }
    WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> seconds = cupti->collect(count);
    if (seconds
            .empty()) {  // CUPTI is loaded but not recording (held elsewhere): events from now on
      cupti_failed = true;
      return events(count);
    }
    return seconds;
  };
}

BatchRunner gpu_runner(std::function<void()> launch, L2 l2) {
  if (BatchRunner runner = kernel_runner(launch, l2)) return runner;
  return event_runner(std::move(launch), l2);
}

const char* gpu_timer() {
  return !cupti_failed && Cupti::instance() != nullptr ? "CUPTI kernel timestamps" : "CUDA events";
}

Timing time_gpu(std::function<void()> launch, const TimingOptions& options, L2 l2) {
  return time_runs(gpu_runner(std::move(launch), l2), options);
}

}  // namespace workbook::cuda
