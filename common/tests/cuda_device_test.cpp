// The GPU side of the harness on a real GPU (skipped without one): the event timer against a
// kernel of known length, the L2 flush, guarded device outputs, checked launches, the ceilings.
#include <workbook/cuda/ceilings.hpp>
#include <workbook/cuda/check.hpp>
#include <workbook/cuda/device.hpp>
#include <workbook/cuda/launches.hpp>
#include <workbook/cuda/memory.hpp>
#include <workbook/cuda/timer.hpp>
#include <workbook/internal/cuda/watchdog.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>

namespace workbook_test {
void fill(float* y, std::size_t n, float value);
void launch_with_threads(int threads);
void launch_with_grid(unsigned x, unsigned y, unsigned threads);
void spin_forever();
}  // namespace workbook_test

namespace {

using ::testing::HasSubstr;
namespace cuda = workbook::cuda;

TEST(EventTimer, MeasuresAKernelOfKnownLength) {
  // The spin kernel runs 1 ms by the GPU's own clock: the events must say so, within the 1 us or
  // so the GPU takes to start a kernel, and run after run (CV well under 2%).
  const workbook::Timing t =
      workbook::time_runs(cuda::event_runner([] { cuda::spin(1'000'000); }), {.max_seconds = 1.0});
  EXPECT_GE(t.summary.median, 1.0e-3);
  EXPECT_LT(t.summary.median, 1.0e-3 + 10e-6);
  EXPECT_LT(t.summary.cv(), 0.02);
}

TEST(KernelTimer, MeasuresShortKernelsWithoutTheEventsOverhead) {
  // CUPTI's records time the kernel itself: a 5 us spin reads 5 to 6 us (the GPU's global timer,
  // which the spin watches, ticks about once a microsecond), while events around it add 1.5-2 us.
  const workbook::BatchRunner kernel = cuda::kernel_runner([] { cuda::spin(5'000); });
  if (!kernel)
    GTEST_SKIP() << "CUPTI is not available here: " << cuda::gpu_timer() << " time instead";
  const workbook::Timing t = workbook::time_runs(kernel, {.max_seconds = 1.0});
  EXPECT_GE(t.summary.median, 5e-6);
  EXPECT_LT(t.summary.median, 5e-6 + 1.5e-6);
  EXPECT_LT(t.summary.cv(), 0.02);
  const workbook::Timing events =
      workbook::time_runs(cuda::event_runner([] { cuda::spin(5'000); }), {.max_seconds = 1.0});
  EXPECT_GT(events.summary.median, t.summary.median) << "events: " << events.summary.median << " s";
  EXPECT_STREQ(cuda::gpu_timer(), "CUPTI kernel timestamps");
}

TEST(KernelTimer, ARunOfSeveralKernelsSpansFirstStartToLastEnd) {
  const workbook::BatchRunner kernel = cuda::kernel_runner([] {
    cuda::spin(20'000);
    cuda::spin(30'000);
  });
  if (!kernel) GTEST_SKIP() << "CUPTI is not available here";
  const workbook::Timing t = workbook::time_runs(kernel, {.max_seconds = 0.5});
  EXPECT_GE(t.summary.median, 50e-6);
  EXPECT_LT(t.summary.median, 50e-6 + 5e-6);
}

TEST(EventTimer, AHostClockWithoutSynchronizingMeasuresOnlyTheLaunch) {
  // The mistake the timer exists to avoid: a launch returns long before the kernel ends.
  cuda::spin(1000);  // warm-up: the first launch loads the module
  WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
  const auto start = std::chrono::steady_clock::now();
  cuda::spin(5'000'000);
  const double host =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_LT(host, 1e-3) << "a 5 ms kernel's launch took " << host << " s of host time";
}

TEST(EventTimer, FlushingTheL2MakesACachedCopyReadMemoryAgain) {
  // 2 x 8 MiB fits in the L2 of any recent GPU: kept there between runs it is copied faster than
  // from device memory, which is what the flush restores.
  const std::size_t n = std::size_t{2} << 20;
  cuda::DeviceBuffer<float> x(n), y(n);
  workbook_test::fill(x.data(), n, 1.5f);
  const double kept =
      cuda::time_gpu([&] { cuda::copy(x.data(), y.data(), n); }, {}, cuda::L2::keep).summary.median;
  const double flushed =
      cuda::time_gpu([&] { cuda::copy(x.data(), y.data(), n); }, {}, cuda::L2::flush)
          .summary.median;
  EXPECT_LT(kept, 0.9 * flushed) << "kept in L2: " << kept << " s; flushed: " << flushed << " s";
}

TEST(DeviceOutput, CatchesUnwrittenElementsAndWritesPastTheEnd) {
  cuda::DeviceOutput<float> y(1000, /*misalign=*/3);
  workbook_test::fill(y.data(), 999, 2.0f);
  const workbook::GuardedBuffer<float>& host = y.fetch();
  EXPECT_TRUE(host.is_poison(999));
  EXPECT_EQ(host[0], 2.0f);
  EXPECT_TRUE(host.damage().intact());
  workbook_test::fill(y.data(), 1001, 2.0f);
  EXPECT_EQ(y.fetch().damage().after, 1u);
  y.poison();
  EXPECT_TRUE(y.fetch().damage().intact());
  EXPECT_TRUE(y.host().is_poison(0));
}

TEST(GpuWatchdog, AKernelThatNeverEndsIsReportedWithinTheDeadlineAndTheGpuStaysUsable) {
  // In a process of its own (GoogleTest runs this executable again), blocked, as a student's code
  // would be, in its own wait for the kernel; its watchdog has a deadline of 3 s.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("WORKBOOK_GPU_TIMEOUT", "3", 1);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EXIT(
      {
        workbook_test::spin_forever();
        static_cast<void>(cudaDeviceSynchronize());
      },
      ::testing::ExitedWithCode(3),
      // (No "In test" line: GoogleTest's child process of a death test tells no listener.)
      "HANG: the GPU's work did not finish within 3 s of the last kernel launch "
      "\\(cudaDeviceSynchronize waited for it all that time\\).\n"
      "  The last kernel launched, a grid of 1 block of 32 threads, is still running");
  unsetenv("WORKBOOK_GPU_TIMEOUT");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20) << "the kernel that never ends was reported after " << seconds << " s";
  std::cout << "reported and exited after " << seconds << " s (deadline 3 s)\n";
  cuda::DeviceOutput<float> y(1000);
  workbook_test::fill(y.data(), 1000, 2.0f);
  EXPECT_EQ(y.fetch()[999], 2.0f) << "the GPU is not usable after the kernel that never ended";
}

TEST(GpuWatchdog, ReportNamesTheLaunchTheCaseAndTheFileToEdit) {
  cuda::Launch l;
  l.grid = {16, 1, 1};
  l.block = {256, 1, 1};
  const std::string report = cuda::testing::unfinished_kernel_report(
      10, l, "cudaMemcpy", "  In test Square.Tail\n  While running square, case: n = 5000\n",
      "edit labs/05_cuda_square/square.cu");
  EXPECT_THAT(report, HasSubstr("*** HANG: the GPU's work did not finish within 10 s of the last "
                                "kernel launch (cudaMemcpy waited for it all that time)."));
  EXPECT_THAT(report, HasSubstr("case: n = 5000"));
  EXPECT_THAT(report, HasSubstr("a grid of 16 blocks of 256 threads, is still running"));
  EXPECT_THAT(report, HasSubstr("Next: edit labs/05_cuda_square/square.cu"));
  EXPECT_THAT(
      cuda::testing::unfinished_kernel_report(10, std::nullopt, "cudaFree", "", "edit your code"),
      HasSubstr("(none observed)"));
}

TEST(Launches, EveryLaunchIsRecordedAsMade) {
  cuda::DeviceOutput<float> y(1000);
  const std::vector<cuda::Launch> launches =
      cuda::observe_launches([&] { workbook_test::fill(y.data(), 1000, 1.0f); });
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].grid, (std::array<unsigned, 3>{4, 1, 1}));
  EXPECT_EQ(launches[0].block, (std::array<unsigned, 3>{256, 1, 1}));
  EXPECT_EQ(launches[0].describe(), "a grid of 4 blocks of 256 threads");
  EXPECT_TRUE(launches[0].one_dimensional());
  ASSERT_TRUE(cuda::last_launch().has_value());
  EXPECT_EQ(cuda::last_launch()->grid[0], 4u);
}

TEST(CudaCheck, ABadLaunchNamesTheKernel) {
  try {
    workbook_test::launch_with_threads(2048);  // at most 1024 threads per block
    FAIL() << "the launch did not throw";
  } catch (const cuda::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("the launch of fill_kernel failed")) << e.what();
    // The limit the launch broke, from the launch record, not a list of every limit.
    EXPECT_THAT(e.what(), HasSubstr("the launch was a grid of 1 block of 2048 threads: 2048 "
                                    "threads per block, over this GPU's limit of 1024"))
        << e.what();
  }
  const std::pair<std::array<unsigned, 3>, const char*> impossible[] = {
      {{1, 65536, 256}, "grid.y = 65536, over this GPU's limit of 65535 for grid.y"},
      {{0, 1, 256}, "a grid with no blocks"}};
  for (const auto& [launch, named] : impossible) {
    try {
      workbook_test::launch_with_grid(launch[0], launch[1], launch[2]);
      ADD_FAILURE() << "the launch did not throw: " << named;
    } catch (const cuda::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(named)) << e.what();
    }
  }
}

TEST(GpuCeilings, AreMeasuredAndPlausible) {
  const workbook::Ceilings c = cuda::measure_ceilings();
  const cuda::DeviceInfo d = cuda::device_info();
  EXPECT_EQ(c.device, d.fingerprint());
  EXPECT_GT(c.copy_all_gbs, 50);
  EXPECT_GT(c.read_all_gbs, 0.7 * c.copy_all_gbs);
  EXPECT_GT(c.l1_read_1t_gbs, c.copy_all_gbs);           // the L2 is faster than device memory
  EXPECT_GT(c.fma_all_gflops, 10 * c.copy_all_gbs / 8);  // far right of a copy's 1/8 FLOP/byte
}

}  // namespace
