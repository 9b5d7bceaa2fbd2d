#include <workbook/timing.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace workbook {
namespace {

// Seconds since `start` on the options' clock.
double since(double start, const TimingOptions& options) {
  return seconds_now(options.clock) - start;
}

// Runs `runner` until both a time and a count are reached; returns the runs' seconds.
std::vector<double> warm_up(const BatchRunner& runner, const TimingOptions& options) {
  std::vector<double> runs;
  const double start = seconds_now(options.clock);
  while (static_cast<int>(runs.size()) < options.warmup_runs ||
         since(start, options) < options.warmup_seconds) {
    for (double s : runner(1)) runs.push_back(s);
  }
  return runs;
}

// Runs per batch so that a batch lasts about options.batch_seconds.
int batch_size(const std::vector<double>& warmup, const TimingOptions& options) {
  const double typical = summarize(warmup).median;
  if (typical <= 0) return 1000;
  return static_cast<int>(std::clamp(options.batch_seconds / typical, 1.0, 1000.0));
}

void append(std::vector<double>& to, const std::vector<double>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

double median_of(std::vector<double> v) {
  return summarize(v).median;
}

}  // namespace

double seconds_now(const TimeSource& clock) {
  if (clock) return clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

BatchRunner local_runner(std::function<void()> kernel, TimeSource clock) {
  return [kernel = std::move(kernel), clock = std::move(clock)](int count) {
    std::vector<double> seconds;
    seconds.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      const double start = seconds_now(clock);
      kernel();
      seconds.push_back(seconds_now(clock) - start);
    }
    return seconds;
  };
}

Timing time_runs(const BatchRunner& runner, const TimingOptions& options) {
  Timing t;
  const std::vector<double> warmup = warm_up(runner, options);
  t.warmup_runs = static_cast<int>(warmup.size());
  const int batch = batch_size(warmup, options);
  const double start = seconds_now(options.clock);
  for (;;) {
    const int room = options.max_runs - static_cast<int>(t.seconds.size());
    append(t.seconds, runner(std::max(1, std::min(batch, room))));
    t.summary = summarize(t.seconds);
    const auto runs = static_cast<int>(t.seconds.size());
    if (runs >= options.min_runs && t.summary.rel_iqr() <= options.target_rel_iqr) {
      t.converged = true;
      break;
    }
    if (runs >= options.max_runs ||
        (runs >= options.min_runs && since(start, options) >= options.max_seconds))
      break;
  }
  return t;
}

Timing time_cpu(std::function<void()> kernel, const TimingOptions& options) {
  return time_runs(local_runner(std::move(kernel)), options);
}

Comparison compare_interleaved(const BatchRunner& a, const BatchRunner& b,
                               const TimingOptions& options,
                               const std::function<bool(const Comparison&)>& decided,
                               const std::function<void(int round)>& before_round) {
  Comparison c;
  // Warm both up before the first timed round, alternating so neither starts cold.
  std::vector<double> warm_a = warm_up(a, options);
  std::vector<double> warm_b = warm_up(b, options);
  c.a.warmup_runs = static_cast<int>(warm_a.size());
  c.b.warmup_runs = static_cast<int>(warm_b.size());
  // Half a batch each, twice per round (A B B A).
  TimingOptions half = options;
  half.batch_seconds = options.batch_seconds / 2;
  const int batch_a = batch_size(warm_a, half), batch_b = batch_size(warm_b, half);

  const double start = seconds_now(options.clock);
  for (;;) {
    if (before_round) before_round(c.rounds);
    std::vector<double> round_a = a(batch_a);
    std::vector<double> round_b = b(batch_b);
    append(round_b, b(batch_b));
    append(round_a, a(batch_a));
    c.ratios.push_back(median_of(round_a) / median_of(round_b));
    append(c.a.seconds, round_a);
    append(c.b.seconds, round_b);
    ++c.rounds;
    c.ratio = summarize(c.ratios);
    c.a.summary = summarize(c.a.seconds);
    c.b.summary = summarize(c.b.seconds);

    const bool enough = c.rounds >= 3 && static_cast<int>(c.a.seconds.size()) >= options.min_runs &&
                        static_cast<int>(c.b.seconds.size()) >= options.min_runs;
    if (enough && c.ratio.rel_iqr() <= options.target_rel_iqr) {
      c.converged = c.a.converged = c.b.converged = true;
      break;
    }
    if (decided && decided(c)) {
      c.decided_early = true;
      break;
    }
    if (c.rounds >= 2 && since(start, options) >= options.max_seconds) break;
    if (static_cast<int>(c.a.seconds.size()) >= options.max_runs) break;
  }
  return c;
}

std::vector<Timing> time_interleaved(const std::vector<BatchRunner>& runners,
                                     const TimingOptions& options) {
  std::vector<Timing> timings(runners.size());
  std::vector<int> batch(runners.size());
  for (std::size_t k = 0; k < runners.size(); ++k) {
    const std::vector<double> warm = warm_up(runners[k], options);
    timings[k].warmup_runs = static_cast<int>(warm.size());
    batch[k] = batch_size(warm, options);
  }
  const double start = seconds_now(options.clock);
  const double cap = options.max_seconds * static_cast<double>(runners.size());
  for (int round = 0; !runners.empty(); ++round) {
    for (std::size_t step = 0; step < runners.size(); ++step) {
      const std::size_t k = round % 2 == 0 ? step : runners.size() - 1 - step;
      append(timings[k].seconds, runners[k](batch[k]));
      timings[k].runs_per_round = batch[k];
      timings[k].summary = summarize(timings[k].seconds);
    }
    bool all_converged = true;
    for (Timing& t : timings) {
      t.converged = static_cast<int>(t.seconds.size()) >= options.min_runs &&
                    t.summary.rel_iqr() <= options.target_rel_iqr;
      all_converged = all_converged && t.converged;
    }
    if (round + 1 >= std::max(options.min_rounds, 3) &&
        (all_converged || since(start, options) >= cap))
      break;
  }
  return timings;
}

Summary ratio_per_round(const Timing& a, const Timing& b) {
  if (a.runs_per_round <= 0 || b.runs_per_round <= 0)
    throw std::invalid_argument("ratio_per_round: both timings must come from time_interleaved");
  auto median_of_round = [](const Timing& t, std::size_t round) {
    const auto first = t.seconds.begin() + static_cast<std::ptrdiff_t>(round * t.runs_per_round);
    return summarize(std::vector<double>(first, first + t.runs_per_round)).median;
  };
  const std::size_t rounds = std::min(a.seconds.size() / std::size_t(a.runs_per_round),
                                      b.seconds.size() / std::size_t(b.runs_per_round));
  std::vector<double> ratios;
  for (std::size_t r = 0; r < rounds; ++r)
    ratios.push_back(median_of_round(a, r) / median_of_round(b, r));
  return summarize(ratios);
}

std::size_t rotation_count(std::size_t bytes_per_set, std::size_t cache_bytes) {
  if (bytes_per_set == 0) throw std::invalid_argument("rotation_count: an empty working set");
  // One set larger than twice the cache evicts itself as it streams; smaller sets need enough
  // others between two uses of the same one.
  if (bytes_per_set >= 2 * cache_bytes) return 1;
  return (2 * cache_bytes + bytes_per_set - 1) / bytes_per_set + 1;
}

}  // namespace workbook
