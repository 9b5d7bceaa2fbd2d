// Statistics and timers: quantiles, summaries, adaptive repeats, interleaved comparison. Every
// timer here reads a fake clock that advances by the durations the test gives its kernels: what is
// asserted does not depend on the speed or the load of the machine. (Real timing is exercised by
// the labs' perf tests and benches.)
#include <workbook/stats.hpp>
#include <workbook/timing.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

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

// A fake clock: it reads `now`, which only the tests' kernels advance.
struct FakeClock {
  double now = 0;
  workbook::TimeSource source() {
    return [this] { return now; };
  }
};

// A runner that reports the durations it is told to, advancing the fake clock by each, and counts
// its calls.
struct FakeRunner {
  std::function<double(int)> duration;  // of the k-th run
  FakeClock clock;
  int runs = 0;
  workbook::BatchRunner runner() {
    return [this](int count) {
      std::vector<double> t;
      for (int i = 0; i < count; ++i) {
        t.push_back(duration(runs++));
        clock.now += t.back();
      }
      return t;
    };
  }
};

TEST(Timing, ConvergesOnSteadyTimesAfterMinRuns) {
  FakeRunner fake{[](int) { return 1e-3; }};
  const workbook::Timing t = workbook::time_runs(
      fake.runner(), {.warmup_seconds = 0, .min_runs = 7, .clock = fake.clock.source()});
  EXPECT_TRUE(t.converged);
  EXPECT_GE(t.seconds.size(), 7u);
  EXPECT_DOUBLE_EQ(t.summary.median, 1e-3);
  EXPECT_EQ(t.warmup_runs, 1);
}

TEST(Timing, StopsAtTheCapWhenTheSpreadStaysLarge) {
  FakeRunner fake{[](int k) { return k % 2 ? 1e-3 : 2e-3; }};
  const workbook::Timing t = workbook::time_runs(
      fake.runner(),
      {.warmup_seconds = 0, .min_runs = 5, .max_runs = 300, .clock = fake.clock.source()});
  EXPECT_FALSE(t.converged);
  EXPECT_EQ(t.seconds.size(), 300u);
  EXPECT_NEAR(t.summary.rel_iqr(), 1.0 / 1.5, 1e-9);
}

TEST(Timing, WarmupRunsAreNotCounted) {
  // The first (cold) run is slow; warm-up absorbs it.
  FakeRunner fake{[](int k) { return k == 0 ? 1.0 : 1e-3; }};
  const workbook::Timing t = workbook::time_runs(
      fake.runner(), {.warmup_seconds = 0, .warmup_runs = 1, .clock = fake.clock.source()});
  EXPECT_DOUBLE_EQ(t.summary.max, 1e-3);
}

TEST(Timing, TheLocalRunnerReadsTheClockAroundEachCall) {
  // A kernel that takes 2^-11 s (about 488 us) by the clock: a power of two, so that the clock's
  // sums and differences are exact.
  constexpr double kCall = 0x1p-11;
  FakeClock clock;
  int calls = 0;
  const workbook::BatchRunner runner = workbook::local_runner(
      [&] {
        ++calls;
        clock.now += kCall;
      },
      clock.source());
  const workbook::Timing t = workbook::time_runs(
      runner, {.warmup_seconds = 0.01, .max_seconds = 0.5, .clock = clock.source()});
  EXPECT_DOUBLE_EQ(t.summary.median, kCall);
  EXPECT_DOUBLE_EQ(t.summary.min, kCall);
  EXPECT_DOUBLE_EQ(t.summary.max, kCall);
  EXPECT_TRUE(t.converged);
  // Warm-up lasts until 0.01 s have passed on the clock: 21 calls of 2^-11 s (20 are 0.00977 s).
  EXPECT_EQ(t.warmup_runs, 21);
  EXPECT_EQ(calls, t.warmup_runs + static_cast<int>(t.seconds.size()));
}

TEST(Timing, StopsAtTheTimeCapWhenTheSpreadStaysLarge) {
  // 0.5 s of timed runs on the clock (after at least min_runs), whatever the spread.
  FakeRunner fake{[](int k) { return k % 2 ? 0x1p-10 : 0x1p-9; }};
  const workbook::Timing t = workbook::time_runs(fake.runner(), {.warmup_seconds = 0,
                                                                 .min_runs = 5,
                                                                 .max_seconds = 0.5,
                                                                 .batch_seconds = 0x1p-6,
                                                                 .clock = fake.clock.source()});
  EXPECT_FALSE(t.converged);
  // Batches of 8 runs (2^-6 s over the warm-up run's 2^-9 s), 4 of each duration: 0.01171875 s a
  // batch, so 43 batches (0.50390625 s), the first to reach the cap.
  EXPECT_EQ(t.seconds.size(), 43u * 8u);
}

// A runner with a constant duration that notes its name in `order` each time it is asked for a
// batch, and advances the clock by the batch's time.
workbook::BatchRunner recording(std::string& order, FakeClock& clock, char name, double seconds) {
  return [&order, &clock, name, seconds](int count) {
    order += name;
    clock.now += count * seconds;
    return std::vector<double>(static_cast<std::size_t>(count), seconds);
  };
}

TEST(Compare, InterleavesABBAAndReportsTheRatio) {
  std::string order;
  FakeClock clock;
  auto side = [&](char name, double seconds) { return recording(order, clock, name, seconds); };
  const workbook::Comparison c = workbook::compare_interleaved(
      side('A', 2e-3), side('B', 1e-3),
      {.warmup_seconds = 0, .warmup_runs = 1, .clock = clock.source()}, {},
      [&order](int round) { order += std::to_string(round); });
  EXPECT_TRUE(c.converged);
  EXPECT_DOUBLE_EQ(c.ratio.median, 2.0);
  EXPECT_EQ(c.rounds, 3);
  // Warm-up of each, then A B B A rounds, each announced by its number.
  EXPECT_EQ(order,
            "AB"
            "0ABBA"
            "1ABBA"
            "2ABBA");
}

TEST(Compare, StopsAtTheTimeCapAfterTwoRounds) {
  // Spread that never converges, 1 s per round on the clock, a cap of 1.5 s: two rounds.
  std::string order;
  FakeClock clock;
  auto side = [&](char name, double seconds) { return recording(order, clock, name, seconds); };
  const workbook::Comparison c = workbook::compare_interleaved(side('A', 0.25), side('B', 0.25),
                                                               {.warmup_seconds = 0,
                                                                .warmup_runs = 1,
                                                                .max_seconds = 1.5,
                                                                .target_rel_iqr = -1,
                                                                .batch_seconds = 0.5,
                                                                .clock = clock.source()});
  EXPECT_FALSE(c.converged);
  EXPECT_EQ(c.rounds, 2);
}

TEST(Compare, StopsEarlyWhenDecided) {
  FakeClock clock;
  auto constant = [&clock](double s) -> workbook::BatchRunner {
    return [s, &clock](int count) {
      clock.now += count * s;
      return std::vector<double>(static_cast<std::size_t>(count), s);
    };
  };
  const workbook::Comparison c = workbook::compare_interleaved(
      constant(3e-3), constant(1e-3),
      {.warmup_seconds = 0, .target_rel_iqr = -1, .clock = clock.source()},
      [](const workbook::Comparison& c) { return c.rounds >= 2 && c.ratio.median > 2; });
  EXPECT_TRUE(c.decided_early);
  EXPECT_EQ(c.rounds, 2);
  EXPECT_DOUBLE_EQ(c.ratio.median, 3.0);
}

TEST(Interleave, RunsEveryKernelEachRoundAlternatingDirection) {
  std::string order;
  FakeClock clock;
  auto side = [&](char name, double seconds) { return recording(order, clock, name, seconds); };
  const std::vector<workbook::Timing> t =
      workbook::time_interleaved({side('A', 1e-3), side('B', 2e-3), side('C', 3e-3)},
                                 {.warmup_seconds = 0, .warmup_runs = 1, .clock = clock.source()});
  EXPECT_EQ(order,
            "ABC"
            "ABC"
            "CBA"
            "ABC");  // warm-up, then three rounds, alternating
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[1].summary.median, 2e-3);
  EXPECT_TRUE(t[2].converged);
}

TEST(Interleave, MinRoundsGoesPastConvergenceAndTheCap) {
  // Both converge at once and the cap is 0: three rounds by default, as many as asked otherwise.
  FakeClock clock;
  auto steady = [](int count) { return std::vector<double>(std::size_t(count), 1e-3); };
  workbook::TimingOptions options{
      .warmup_seconds = 0, .warmup_runs = 1, .max_seconds = 0, .clock = clock.source()};
  auto rounds = [&](const workbook::TimingOptions& o) {
    const std::vector<workbook::Timing> t = workbook::time_interleaved({steady, steady}, o);
    return t[0].seconds.size() / std::size_t(t[0].runs_per_round);
  };
  EXPECT_EQ(rounds(options), 3u);
  options.min_rounds = 25;
  EXPECT_EQ(rounds(options), 25u);
  options.min_rounds = 1;  // never fewer than three: a median and quartiles need them
  EXPECT_EQ(rounds(options), 3u);
}

TEST(Interleave, TheRatioIsTakenPerRound) {
  // Round by round, B takes twice A's time, then three times (its second half is slower): the
  // ratio's quartiles show that, where the two medians alone would not.
  FakeClock clock;
  int calls = 0;
  const workbook::BatchRunner a = [&](int count) {
    return std::vector<double>(std::size_t(count), 1e-3);
  };
  const workbook::BatchRunner b = [&](int count) {
    return std::vector<double>(std::size_t(count), ++calls <= 3 ? 2e-3 : 3e-3);
  };
  const std::vector<workbook::Timing> t = workbook::time_interleaved(
      {a, b}, {.warmup_seconds = 0, .warmup_runs = 1, .max_seconds = 0, .clock = clock.source()});
  ASSERT_GT(t[1].runs_per_round, 0);
  const workbook::Summary ratio = workbook::ratio_per_round(t[1], t[0]);
  EXPECT_EQ(ratio.count, t[0].seconds.size() / std::size_t(t[0].runs_per_round));
  EXPECT_DOUBLE_EQ(ratio.min, 2.0);
  EXPECT_DOUBLE_EQ(ratio.max, 3.0);
  EXPECT_THROW(workbook::ratio_per_round(workbook::Timing{}, t[0]), std::invalid_argument);
}

TEST(Rotation, EnoughSetsToCoverTwiceTheCache) {
  EXPECT_EQ(workbook::rotation_count(100, 1000), 21u);  // 20 others of 100 bytes between two uses
  EXPECT_EQ(workbook::rotation_count(2000, 1000), 1u);  // one set twice the cache evicts itself
  EXPECT_EQ(workbook::rotation_count(1500, 1000), 3u);
  EXPECT_THROW(workbook::rotation_count(0, 1000), std::invalid_argument);
}

}  // namespace
