// The watchdog behind internal/cuda/watchdog.hpp.
#include <workbook/internal/cuda/watchdog.hpp>

#include <workbook/cuda/waits.hpp>
#include <workbook/format.hpp>
#include <workbook/internal/crash_report.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

namespace workbook::cuda::testing {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A line of /proc/self/status, or "".
std::string status_field(const std::string& name) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + ":", 0) == 0) return line.substr(name.size() + 1);
  return "";
}

// compute-sanitizer runs the program with its own libraries loaded in it (CUDA 13:
// libsanitizer-collection.so and others, and NV_SANITIZER_* variables in its environment).
bool under_compute_sanitizer() {
  if (std::getenv("NV_SANITIZER_INJECTION_PORT_BASE") != nullptr) return true;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("libsanitizer-collection") != std::string::npos ||
        line.find("compute-sanitizer") != std::string::npos)
      return true;
  return false;
}

// What the crash report would name: the test and case running, and the file to edit.
std::string running_now() {
  char text[3072];
  workbook::testing::internal::format_running(text, sizeof text);
  return text;
}

std::string edit_now() {
  char text[512];
  workbook::testing::internal::format_edit(text, sizeof text);
  return text;
}

class Watchdog {
 public:
  explicit Watchdog(double seconds) : seconds_(seconds) {
    thread_ = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  // A blocking call (cudaMemcpy, cudaDeviceSynchronize, ...) that has waited `seconds_` with no
  // launch since: the work before it does not finish. No CUDA call here: it could wait behind it.
  void watch() {
    std::size_t launches = launch_count();
    Clock::time_point last = Clock::now();
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; })) {
      if (const std::size_t now = launch_count(); now != launches) {
        launches = now;
        last = Clock::now();
      }
      const std::optional<GpuWait> wait = gpu_wait();
      if (!wait || seconds_since(std::max(last, wait->since)) < seconds_) continue;
      const std::string report =
          unfinished_kernel_report(seconds_, last_launch(), wait->call, running_now(), edit_now());
      std::fputs(report.c_str(), stderr);
      std::fflush(nullptr);
      std::_Exit(workbook::testing::kCrashExitCode);  // not exit(): it would wait for the GPU
    }
  }

  double seconds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

double gpu_watchdog_seconds() {
  if (std::getenv("WORKBOOK_MEMCHECK_RERUN") != nullptr) return 0;
  if (const std::string tracer = status_field("TracerPid");
      !tracer.empty() && std::atoi(tracer.c_str()) != 0)
    return 0;
  if (const char* s = std::getenv("WORKBOOK_GPU_TIMEOUT"); s != nullptr && *s != '\0')
    return std::max(0.0, std::atof(s));
  return under_compute_sanitizer() ? 0 : 8;
}

void start_gpu_watchdog(double seconds) {
  if (seconds <= 0) return;
  // The records it reads outlive it (made first, destroyed last).
  launch_count();
  gpu_wait();
  static Watchdog watchdog(seconds);
}

std::string unfinished_kernel_report(double seconds, const std::optional<Launch>& last,
                                     const std::string& call, const std::string& running,
                                     const std::string& edit) {
  std::string r = "\n*** HANG: the GPU's work did not finish within " + format_fixed(seconds, 0) +
                  " s of the last kernel launch (" + call + " waited for it all that time).\n";
  r += running;
  r += "  The last kernel launched, " + (last ? last->describe() : std::string("(none observed)")) +
       ", is still running. ";
  r += "A kernel runs forever when a loop never reaches its end (an index that does not move, "
       "such as `i + step` where `i += step` was meant; an index that wraps around; a bound it "
       "never meets), when a thread waits for a flag that no thread sets, or when "
       "__syncthreads() is inside a branch that some threads of the block skip (the others wait "
       "for them at the barrier forever).\n";
  r += "  The test process ends here, which frees the GPU (under ctest, the other tests run on).\n";
  r += "  Next: " + edit +
       ": look at the kernel's loops and barriers (compute-sanitizer --tool synccheck finds a "
       "barrier not every thread reaches; printf from one thread shows a loop that does not "
       "advance). Set WORKBOOK_GPU_TIMEOUT (seconds) only if the kernel really needs longer.\n";
  return r;
}

}  // namespace workbook::cuda::testing
