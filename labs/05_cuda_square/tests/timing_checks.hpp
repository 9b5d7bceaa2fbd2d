#pragma once
// Lab 05 Part B: the checks of a time_launches function against work of known length (the harness's
// spin kernel runs for a given number of nanoseconds of the GPU's own clock). Each check catches
// one classic mistake and says which. timing_test.cpp runs them on your time_launches; the
// solution's tests run them on the mistakes themselves, to show that each one is caught.
#include <workbook/cuda/check.hpp>
#include <workbook/cuda/timer.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lab05::timing_checks {

/// A time_launches: launch, warm-up launches, timed runs -> milliseconds per run.
using TimeLaunches = std::function<std::vector<float>(const std::function<void()>&, int, int)>;

inline const char* kEdit = " Edit labs/05_cuda_square/square.cu: time_launches.";

/// Work of known length, with one twist: its first launch is cold, 20 ms instead of the usual, as
/// a real first launch is (the module is loaded, the clocks ramp up, the caches are cold). It
/// counts its launches, so that the checks know what time_launches did.
class KnownWork {
 public:
  explicit KnownWork(std::vector<double> milliseconds) : ms_(std::move(milliseconds)) {}
  static constexpr double kColdMs = 20;

  void operator()() {
    workbook::cuda::spin(static_cast<std::uint64_t>(ms_of(launches_) * 1e6));
    ++launches_;
  }
  int launches() const { return launches_; }
  /// How long launch number k (0 = the first) lasts.
  double ms_of(int k) const { return k == 0 ? kColdMs : ms_[(k - 1) % ms_.size()]; }

 private:
  std::vector<double> ms_;
  int launches_ = 0;
};

/// Events measure the GPU's time from the start event to the stop event: the kernel plus a few
/// microseconds to start it. Allow 2% and 20 us over the work's length, and nothing under it.
inline ::testing::AssertionResult close_to(float got_ms, double want_ms) {
  if (got_ms >= want_ms * 0.999 && got_ms <= want_ms * 1.02 + 0.02)
    return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure();
  failure << "a run of " << want_ms << " ms measured " << got_ms << " ms. ";
  if (got_ms < 0 && -got_ms >= want_ms * 0.999 && -got_ms <= want_ms * 1.02 + 0.02)
    failure << "The length is right but its sign is not: cudaEventElapsedTime(&ms, start, stop) "
               "gives stop - start, so the events are swapped, in that call or where they were "
               "recorded (the start event must be recorded before the launch, the stop after).";
  else if (got_ms < 0)
    failure << "A negative time: cudaEventElapsedTime(&ms, start, stop) gives stop - start, so "
               "the stop event was recorded before the start event, or the two are swapped in "
               "that call.";
  else if (got_ms < 0.5 * want_ms)
    failure
        << "Far too short: you read the time when the launch returned, not when the work finished. "
           "A launch only enqueues the kernel. Record a CUDA event before and after the launch and "
           "wait for the second (cudaEventSynchronize) before reading cudaEventElapsedTime.";
  else if (got_ms > 1.5 * want_ms)
    failure
        << "Far too long: does the time include other runs, the cold first launch, or host work?";
  return failure << kEdit;
}

/// Each run of 2 ms work measures 2 ms: catches a host clock read without waiting for the GPU.
inline ::testing::AssertionResult measures_work_of_known_length(const TimeLaunches& time_launches) {
  KnownWork work({2.0});
  const std::vector<float> ms = time_launches([&] { work(); }, 2, 8);
  if (ms.size() != 8u)
    return ::testing::AssertionFailure()
           << "asked for 8 timed runs, got " << ms.size() << " durations." << kEdit;
  for (float t : ms)
    if (auto r = close_to(t, 2.0); !r) return r;
  return ::testing::AssertionSuccess();
}

/// warmup + runs launches, none of the timed ones the cold first: catches no warm-up, and a warm-up
/// that is timed.
inline ::testing::AssertionResult warms_up_and_leaves_the_first_launch_out(
    const TimeLaunches& time_launches) {
  KnownWork work({1.0});
  const std::vector<float> ms = time_launches([&] { work(); }, 3, 5);
  if (work.launches() != 3 + 5)
    return ::testing::AssertionFailure()
           << "with warmup = 3 and runs = 5, launch must be called 8 times; it was called "
           << work.launches()
           << " times. Launch `warmup` times without timing, then `runs` times between events."
           << kEdit;
  if (ms.size() != 5u)
    return ::testing::AssertionFailure()
           << "asked for 5 timed runs, got " << ms.size() << "." << kEdit;
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (ms[i] > 0.5 * KnownWork::kColdMs)
      return ::testing::AssertionFailure()
             << "run " << i << " took " << ms[i]
             << " ms where the work takes 1 ms: it is the cold first launch (" << KnownWork::kColdMs
             << " ms here; in a real program the module loads and the clocks ramp up). "
             << "Time only the launches after the warm-up." << kEdit;
  return ::testing::AssertionSuccess();
}

/// Runs alternating 1 ms and 3 ms measure 1, 3, 1, ...: catches one pair of events around all the
/// runs, divided by their number (2 ms each).
inline ::testing::AssertionResult times_each_run_on_its_own(const TimeLaunches& time_launches) {
  KnownWork work({1.0, 3.0});
  const int warmup = 1;
  const std::vector<float> ms = time_launches([&] { work(); }, warmup, 6);
  if (ms.size() != 6u)
    return ::testing::AssertionFailure()
           << "asked for 6 timed runs, got " << ms.size() << "." << kEdit;
  for (int i = 0; i < 6; ++i)
    if (auto r = close_to(ms[i], work.ms_of(warmup + i)); !r)
      return r << " (Run " << i
               << ": each run needs its own pair of events, in the order the runs ran.)";
  return ::testing::AssertionSuccess();
}

/// Nothing still running when it returns: the times it gives are final.
inline ::testing::AssertionResult returns_when_the_work_has_finished(
    const TimeLaunches& time_launches) {
  KnownWork work({5.0});
  time_launches([&] { work(); }, 1, 2);
  const cudaError_t pending = cudaStreamQuery(nullptr);  // cudaErrorNotReady while work is queued
  WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
  if (pending == cudaSuccess) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the GPU was still busy when time_launches returned: wait for the last "
            "stop event (cudaEventSynchronize) before reading the times."
         << kEdit;
}

}  // namespace lab05::timing_checks
