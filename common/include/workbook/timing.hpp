#pragma once
/// \file timing.hpp
/// \brief CPU timing done honestly: warm-up, adaptive repeats until the spread is small, median and
/// IQR, and interleaved A/B comparison of two kernels.
///
/// A "runner" runs a kernel a given number of times and returns each run's seconds. local_runner()
/// wraps a function of this process; the perf driver's runners ask a worker process to do it, so
/// the same statistics serve both. Inputs larger than the caches, or rotated (rotation_count), keep
/// a kernel from being timed on data a previous run left in cache.

#include <workbook/stats.hpp>

#include <cstddef>
#include <functional>
#include <vector>

namespace workbook {

/// Runs a kernel `count` times and returns the duration of each run, in seconds.
using BatchRunner = std::function<std::vector<double>(int count)>;

/// A clock: seconds since a fixed origin, never decreasing. Empty means std::chrono::steady_clock;
/// the harness's own tests pass a fake one, so that what they assert does not depend on the speed
/// or the load of the machine that runs them.
using TimeSource = std::function<double()>;

/// Seconds on `clock`, or on std::chrono::steady_clock when it is empty.
double seconds_now(const TimeSource& clock);

/// How long to time, and when to stop.
struct TimingOptions {
  double warmup_seconds =
      0.1;              ///< run and discard at least this long first (caches, page faults, clocks)
  int warmup_runs = 1;  ///< ... and at least this many runs
  int min_runs = 7;     ///< never summarise fewer timed runs
  int max_runs = 100000;         ///< cap on timed runs (for kernels of nanoseconds)
  double max_seconds = 2.0;      ///< stop after this long even if the spread is still above target
  double target_rel_iqr = 0.02;  ///< stop once IQR / median is below this (after min_runs)
  double batch_seconds = 0.05;  ///< how long one batch runs before the spread is checked (or, in an
                                ///< A/B comparison, before switching sides)
  /// time_interleaved: do at least this many rounds, past convergence and past max_seconds (a
  /// ratio's quartiles need rounds, and whoever asks for them has the time).
  int min_rounds = 3;
  TimeSource clock = {};  ///< what the warm-up and the caps read; empty: steady_clock
};

/// The timed runs of one kernel.
struct Timing {
  std::vector<double> seconds;  ///< every timed run, in order
  Summary summary;              ///< of `seconds`: the median is the kernel's time
  int warmup_runs = 0;          ///< runs done and discarded before the first timed one
  bool converged = false;       ///< the spread reached the target before a cap
  /// time_interleaved: the runs of each round (one batch), so that `seconds` splits into rounds.
  int runs_per_round = 0;
};

/// A runner for a function of this process: `clock` (empty: steady_clock) read around each call.
BatchRunner local_runner(std::function<void()> kernel, TimeSource clock = {});

/// Times a kernel: warm-up, then batches of runs until the spread converges or a cap is reached.
Timing time_runs(const BatchRunner& runner, const TimingOptions& options = {});

/// time_runs(local_runner(kernel), options).
Timing time_cpu(std::function<void()> kernel, const TimingOptions& options = {});

/// Two kernels timed in alternation, A B B A, round after round, so that drift (clock changes,
/// another process, thermal state) hits both alike. The ratio is taken per round.
struct Comparison {
  Timing a;                    ///< every timed run of A
  Timing b;                    ///< every timed run of B
  std::vector<double> ratios;  ///< per round: median of A's runs / median of B's runs
  Summary ratio;               ///< of `ratios`: its median is the verdict, "A takes 1.3x B's time"
  int rounds = 0;              ///< A B B A rounds done
  bool converged = false;      ///< the spread of the ratios reached the target before a cap
  bool decided_early = false;  ///< stopped because `decided` said the outcome is already clear
};

/// Compares A with B. `decided`, when given, is asked after each round and may stop early (say,
/// once A is clearly far slower than B: more rounds would not change the verdict). `before_round`,
/// when given, is told the number of each timed round (0, 1, ...) before it starts: the perf
/// driver picks a round in which it checks the outputs. At least two rounds run, unless
/// options.max_runs stops the first.
Comparison compare_interleaved(const BatchRunner& a, const BatchRunner& b,
                               const TimingOptions& options = {},
                               const std::function<bool(const Comparison&)>& decided = {},
                               const std::function<void(int round)>& before_round = {});

/// Several kernels timed in rounds, each running one batch per round, in forward order one round
/// and backward the next (A B C, C B A, ...), so that drift hits all alike. Stops when every
/// kernel's spread has converged or after options.max_seconds per kernel, once it has done
/// options.min_rounds rounds (3 at least).
std::vector<Timing> time_interleaved(const std::vector<BatchRunner>& runners,
                                     const TimingOptions& options = {});

/// Two kernels timed in the same interleaved rounds (time_interleaved): per round, the median of
/// a's runs over the median of b's (a's time over b's), summarised over the rounds both ran, so
/// that its quartiles state the noise of the comparison. Throws std::invalid_argument when either
/// was not timed by time_interleaved.
Summary ratio_per_round(const Timing& a, const Timing& b);

/// How many copies of a working set of `bytes_per_set` bytes to rotate through so that each run
/// finds its data evicted from a cache of `cache_bytes`: enough sets to cover twice the cache.
std::size_t rotation_count(std::size_t bytes_per_set, std::size_t cache_bytes);

}  // namespace workbook
