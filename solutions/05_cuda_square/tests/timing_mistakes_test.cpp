// The classic mistakes of Part B, written out, each caught by the lab's timing checks (and the
// reference passing all of them): the checks do check what they claim.
#include "square.hpp"
#include "timing_checks.hpp"

#include <workbook/cuda/check.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace {

namespace checks = lab05::timing_checks;
using Launch = std::function<void()>;

// The host's clock around each launch, no synchronisation: measures the launch call, microseconds.
std::vector<float> host_clock_without_sync(const Launch& launch, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<float> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    launch();
    ms.push_back(
        std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
  return ms;
}

// Events around each run, right, but every launch timed: no warm-up.
std::vector<float> no_warmup(const Launch& launch, int, int runs) {
  return lab05::time_launches(launch, 0, runs);
}

// Events around every launch, the warm-up included, and the first `runs` returned.
std::vector<float> times_the_first_launch(const Launch& launch, int warmup, int runs) {
  std::vector<float> all = lab05::time_launches(launch, 0, warmup + runs);
  all.resize(static_cast<std::size_t>(runs));
  return all;
}

// One pair of events around all the runs, the total divided evenly.
std::vector<float> one_pair_of_events(const Launch& launch, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) launch();
  cudaEvent_t start, stop;
  WORKBOOK_CUDA_CHECK(cudaEventCreate(&start));
  WORKBOOK_CUDA_CHECK(cudaEventCreate(&stop));
  WORKBOOK_CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < runs; ++i) launch();
  WORKBOOK_CUDA_CHECK(cudaEventRecord(stop));
  WORKBOOK_CUDA_CHECK(cudaEventSynchronize(stop));
  float total = 0;
  WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&total, start, stop));
  WORKBOOK_CUDA_CHECK(cudaEventDestroy(start));
  WORKBOOK_CUDA_CHECK(cudaEventDestroy(stop));
  return std::vector<float>(static_cast<std::size_t>(runs), total / runs);
}

// Right times, but work still running when it returns (as when the last stop event is never
// waited for): here one more launch, left in the queue.
std::vector<float> returns_too_early(const Launch& launch, int warmup, int runs) {
  std::vector<float> ms = lab05::time_launches(launch, warmup, runs);
  launch();  // one more, left running
  return ms;
}

TEST(TimingMistakes, TheReferencePassesEveryCheck) {
  EXPECT_TRUE(checks::measures_work_of_known_length(lab05::time_launches));
  EXPECT_TRUE(checks::warms_up_and_leaves_the_first_launch_out(lab05::time_launches));
  EXPECT_TRUE(checks::times_each_run_on_its_own(lab05::time_launches));
  EXPECT_TRUE(checks::returns_when_the_work_has_finished(lab05::time_launches));
}

TEST(TimingMistakes, AHostClockWithoutSyncIsCaught) {
  const auto r = checks::measures_work_of_known_length(host_clock_without_sync);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("Far too short"), std::string::npos) << r.message();
}

TEST(TimingMistakes, NoWarmupIsCaught) {
  const auto r = checks::warms_up_and_leaves_the_first_launch_out(no_warmup);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("must be called 8 times"), std::string::npos)
      << r.message();
}

TEST(TimingMistakes, TimingTheFirstLaunchIsCaught) {
  const auto r = checks::warms_up_and_leaves_the_first_launch_out(times_the_first_launch);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("cold first launch"), std::string::npos) << r.message();
}

TEST(TimingMistakes, OnePairOfEventsForAllRunsIsCaught) {
  const auto r = checks::times_each_run_on_its_own(one_pair_of_events);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("its own pair of events"), std::string::npos)
      << r.message();
}

TEST(TimingMistakes, ReturningWhileTheGpuIsBusyIsCaught) {
  EXPECT_FALSE(checks::returns_when_the_work_has_finished(returns_too_early));
}

}  // namespace
