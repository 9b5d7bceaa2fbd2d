// Statistics and timers: quantiles, summaries, adaptive repeats, interleaved comparison.
#include <workbook/stats.hpp>
#include <workbook/timing.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

TEST(Stats, QuantilesInterpolateLikeNumPy) {
  const std::vector<double> sorted = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(workbook::quantile(sorted, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(workbook::quantile(sorted, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(workbook::quantile(sorted, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(workbook::quantile(sorted, 0.0), 1);
  EXPECT_DOUBLE_EQ(workbook::quantile(sorted, 1.0), 4);
  EXPECT_THROW(workbook::quantile({}, 0.5), std::invalid_argument);
}

TEST(Stats, SummaryOfUnsortedSamples) {
  const std::vector<double> samples = {5, 1, 4, 2, 3};
  const workbook::Summary s = workbook::summarize(samples);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.5));
  EXPECT_DOUBLE_EQ(s.iqr(), 2);
  EXPECT_DOUBLE_EQ(s.rel_iqr(), 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.cv(), std::sqrt(2.5) / 3);
}

TEST(Stats, RejectsEmptyAndNaN) {
  EXPECT_THROW(workbook::summarize({}), std::invalid_argument);
  const std::vector<double> bad = {1, NAN};
  EXPECT_THROW(workbook::summarize(bad), std::invalid_argument);
}

// A runner that reports the durations it is told to, instantly, and counts its calls.
struct FakeRunner {
  std::function<double(int)> duration;  // of the k-th run
  int runs = 0;
  workbook::BatchRunner runner() {
    return [this](int count) {
      std::vector<double> t;
      for (int i = 0; i < count; ++i) t.push_back(duration(runs++));
      return t;
    };
  }
};

TEST(Timing, ConvergesOnSteadyTimesAfterMinRuns) {
  FakeRunner fake{[](int) { return 1e-3; }};
  const workbook::Timing t = workbook::time_runs(fake.runner(), {.warmup_seconds = 0, .min_runs = 7});
  EXPECT_TRUE(t.converged);
  EXPECT_GE(t.seconds.size(), 7u);
  EXPECT_DOUBLE_EQ(t.summary.median, 1e-3);
  EXPECT_EQ(t.warmup_runs, 1);
}

TEST(Timing, StopsAtTheCapWhenTheSpreadStaysLarge) {
  FakeRunner fake{[](int k) { return k % 2 ? 1e-3 : 2e-3; }};
  const workbook::Timing t =
      workbook::time_runs(fake.runner(), {.warmup_seconds = 0, .min_runs = 5, .max_runs = 300});
  EXPECT_FALSE(t.converged);
  EXPECT_EQ(t.seconds.size(), 300u);
  EXPECT_NEAR(t.summary.rel_iqr(), 1.0 / 1.5, 1e-9);
}

TEST(Timing, WarmupRunsAreNotCounted) {
  // The first (cold) run is slow; warm-up absorbs it.
  FakeRunner fake{[](int k) { return k == 0 ? 1.0 : 1e-3; }};
  const workbook::Timing t = workbook::time_runs(fake.runner(), {.warmup_seconds = 0, .warmup_runs = 1});
  EXPECT_DOUBLE_EQ(t.summary.max, 1e-3);
}

TEST(Timing, MeasuresARealKernel) {
  auto spin = [] {
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(500);
    while (std::chrono::steady_clock::now() < end) {
    }
  };
  const workbook::Timing t = workbook::time_cpu(spin, {.warmup_seconds = 0.01, .max_seconds = 0.5});
  EXPECT_GE(t.summary.median, 500e-6);
  EXPECT_LT(t.summary.median, 5e-3);
}

// A runner with a constant duration that notes its name in `order` each time it is asked for a batch.
workbook::BatchRunner recording(std::string& order, char name, double seconds) {
  return [&order, name, seconds](int count) {
    order += name;
    return std::vector<double>(static_cast<std::size_t>(count), seconds);
  };
}

TEST(Compare, InterleavesABBAAndReportsTheRatio) {
  std::string order;
  auto side = [&order](char name, double seconds) { return recording(order, name, seconds); };
  const workbook::Comparison c =
      workbook::compare_interleaved(side('A', 2e-3), side('B', 1e-3), {.warmup_seconds = 0, .warmup_runs = 1});
  EXPECT_TRUE(c.converged);
  EXPECT_DOUBLE_EQ(c.ratio.median, 2.0);
  EXPECT_EQ(c.rounds, 3);
  EXPECT_EQ(order, "AB" "ABBA" "ABBA" "ABBA");  // warm-up of each, then A B B A rounds
}

TEST(Compare, StopsEarlyWhenDecided) {
  auto constant = [](double s) -> workbook::BatchRunner {
    return [s](int count) { return std::vector<double>(static_cast<std::size_t>(count), s); };
  };
  const workbook::Comparison c = workbook::compare_interleaved(
      constant(3e-3), constant(1e-3), {.warmup_seconds = 0, .target_rel_iqr = -1},
      [](const workbook::Comparison& c) { return c.rounds >= 2 && c.ratio.median > 2; });
  EXPECT_TRUE(c.decided_early);
  EXPECT_EQ(c.rounds, 2);
  EXPECT_DOUBLE_EQ(c.ratio.median, 3.0);
}

TEST(Interleave, RunsEveryKernelEachRoundAlternatingDirection) {
  std::string order;
  auto side = [&order](char name, double seconds) { return recording(order, name, seconds); };
  const std::vector<workbook::Timing> t = workbook::time_interleaved(
      {side('A', 1e-3), side('B', 2e-3), side('C', 3e-3)}, {.warmup_seconds = 0, .warmup_runs = 1});
  EXPECT_EQ(order, "ABC" "ABC" "CBA" "ABC");  // warm-up, then three rounds, alternating
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[1].summary.median, 2e-3);
  EXPECT_TRUE(t[2].converged);
}

TEST(Rotation, EnoughSetsToCoverTwiceTheCache) {
  EXPECT_EQ(workbook::rotation_count(100, 1000), 21u);  // 20 others of 100 bytes between two uses
  EXPECT_EQ(workbook::rotation_count(2000, 1000), 1u);  // one set twice the cache evicts itself
  EXPECT_EQ(workbook::rotation_count(1500, 1000), 3u);
  EXPECT_THROW(workbook::rotation_count(0, 1000), std::invalid_argument);
}

}  // namespace
