// The deadline behind cuda/wait.hpp: an event recorded on the default stream, polled.
#include <workbook/cuda/wait.hpp>

#include <workbook/cuda/launches.hpp>
#include <workbook/format.hpp>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

namespace workbook::cuda {
namespace {

struct Deadline {
  std::mutex mutex;
  double seconds = 0;
  std::function<std::string()> test_name;
};

Deadline& deadline() {
  static Deadline d;
  return d;
}

}  // namespace

void set_gpu_wait_deadline(double seconds, std::function<std::string()> test_name) {
  Deadline& d = deadline();
  const std::lock_guard lock(d.mutex);
  d.seconds = seconds;
  d.test_name = std::move(test_name);
}

double gpu_wait_deadline() {
  Deadline& d = deadline();
  const std::lock_guard lock(d.mutex);
  return d.seconds;
}

std::string unfinished_kernel_report(double seconds, const std::string& while_doing,
                                     const std::string& test_name) {
  const std::optional<Launch> last = last_launch();
  std::string r =
      "\n*** TIMEOUT: the GPU's work did not finish within " + format_fixed(seconds, 0) + " s";
  if (!test_name.empty()) r += " in test " + test_name;
  r += " (the harness was " + while_doing + ").\n  The last kernel launched, " +
       (last ? last->describe() : std::string("(none observed)")) +
       ", is still running. A kernel runs forever when a loop never reaches its end (a bound it "
       "never meets, a step of 0: a grid-stride step computed in a type that overflows, an index "
       "reset inside the loop), when a thread waits for a flag that no thread sets, or when a "
       "__syncthreads() is inside a branch that some threads of the block skip (the others "
       "wait for them at the barrier forever).\n  The test process ends here, which frees the GPU; "
       "the other tests run on. Next: edit your kernel (the function this test calls); find the "
       "loop with compute-sanitizer --tool synccheck, or by printing from one thread "
       "(printf in device code), and raise WORKBOOK_GPU_TIMEOUT (seconds) only if your kernel "
       "really needs longer.\n";
  return r;
}

void wait_for_gpu(const char* while_doing) {
  double seconds = 0;
  std::function<std::string()> name;
  {
    Deadline& d = deadline();
    const std::lock_guard lock(d.mutex);
    seconds = d.seconds;
    name = d.test_name;
  }
  if (seconds <= 0) return;
  cudaEvent_t done = nullptr;
  if (cudaEventCreateWithFlags(&done, cudaEventDisableTiming) != cudaSuccess) return;
  if (cudaEventRecord(done, 0) != cudaSuccess) {
    cudaEventDestroy(done);
    return;  // the copy that follows reports the error
  }
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(50);
  while (cudaEventQuery(done) == cudaErrorNotReady) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) {
      std::cout << unfinished_kernel_report(seconds, while_doing, name ? name() : "") << std::flush;
      std::fflush(nullptr);
      std::_Exit(1);  // not exit(): destructors would wait for the GPU, forever
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
  cudaEventDestroy(done);
}

}  // namespace workbook::cuda
