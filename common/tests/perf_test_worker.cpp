// A perf worker for the harness's own tests, built twice: with WORKBOOK_TEST_WORKER_BAD=0 every
// case behaves; with 1, each misbehaves the way it is named (slow, crash, hang, ...), so the
// driver's handling of each failure can be tested against the well-behaved one.
//
// The kernels run for real (their outputs are checked), but report fixed times: what the driver
// decides from the times (pass, too slow, the speedup) is then the same on any machine, however
// loaded. The real timers are tested by the labs' perf tests and benches.
#include <workbook/not_implemented.hpp>
#include <workbook/perf.hpp>
#include <workbook/skip.hpp>
#include <workbook/tensor.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <time.h>

#include <sys/mman.h>
#include <sys/stat.h>

namespace {

constexpr bool kBad = WORKBOOK_TEST_WORKER_BAD;
constexpr std::size_t kN = std::size_t{1} << 16;
constexpr double kCallSeconds = 1e-3;  // what one call of the well-behaved kernel reports

// A runner that makes `count` real calls of `run` and reports `seconds` for each.
workbook::BatchRunner fixed_time(std::function<void()> run, double seconds) {
  return [run = std::move(run), seconds](int count) {
    for (int i = 0; i < count; ++i) run();
    return std::vector<double>(static_cast<std::size_t>(count), seconds);
  };
}

enum class Misbehaviour {
  none,
  slow,
  not_implemented,
  crash,
  wrong,
  stale,      // writes its output on the first call only
  overrun,    // right, but from the second call on also writes past the end of its output
  hang,       // from its third call on, asleep for ever
  spin,       // from its third call on, busy for ever
  ping_pong,  // from its third call on, two threads hand a turn back and forth for ever
  chatty,
  faked,  // wrong on timed calls, and its in-process verify says "right" after the first
  skipped_when_timed,  // writes nothing on timed calls, and fakes its in-process verify likewise
  tamper,  // right, but maps the driver's shared memory (fd 5) for writing, and keeps it
};

// Maps the driver's shared memory for the output (fd 5) for writing, and never unmaps it: code that
// could change the copied output after the harness's copy.
void map_shared_memory_for_writing() {
  struct stat st {};
  if (fstat(5, &st) == 0 && st.st_size > 0)
    (void)mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, 5,
               0);
}

// Two threads that take turns for ever, each waking the other through a condition variable.
void hand_a_turn_back_and_forth() {
  std::mutex m;
  std::condition_variable cv;
  int turn = 0;
  auto player = [&](int me) {
    for (;;) {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return turn == me; });
      turn = 1 - me;
      cv.notify_all();
    }
  };
  std::thread other(player, 1);
  player(0);
  other.join();  // (never reached: neither player stops)
}

// y = 2 x, done the way `m` says when this is the bad worker.
void scale(workbook::perf::Case& perf, Misbehaviour m) {
  workbook::AlignedVector<float> x(kN);
  workbook::fill_uniform(x, perf.rng());
  workbook::GuardedBuffer<float> y(kN);
  if (!kBad) m = Misbehaviour::none;
  int calls = 0, verified = 0;
  const bool fakes = m == Misbehaviour::faked || m == Misbehaviour::skipped_when_timed;
  perf.describe("scale", "y = 2 x over 64 Ki floats");
  perf.work({.ops = double(kN), .bytes = 8.0 * kN});
  perf.hint(0.5, "a test hint");
  const workbook::Work copy_work{.ops = 0, .bytes = 8.0 * kN};
  auto copy = [&] { std::memcpy(y.data(), x.data(), kN * sizeof(float)); };
  perf.extra({.label = "memcpy baseline",
              .run = copy,
              .work = copy_work,
              .runner = fixed_time(copy, kCallSeconds / 2)});
  auto run = [&] {
    ++calls;
    if (m == Misbehaviour::not_implemented) throw workbook::NotImplemented("scale");
    if (m == Misbehaviour::crash && calls == 3) std::abort();
    if (m == Misbehaviour::hang && calls == 3) std::this_thread::sleep_for(std::chrono::hours(1));
    if (m == Misbehaviour::spin && calls == 3)
      for (;;) asm volatile("" ::: "memory");
    if (m == Misbehaviour::ping_pong && calls == 3) hand_a_turn_back_and_forth();
    if (m == Misbehaviour::stale && calls > 1) return;  // "caches" its first answer
    if (m == Misbehaviour::skipped_when_timed && calls > 1) return;
    if (m == Misbehaviour::overrun && calls > 1) y.data()[kN] = 0.0f;  // one past the end
    if (m == Misbehaviour::tamper && calls == 2) map_shared_memory_for_writing();
    if (m == Misbehaviour::chatty) std::printf("{\"type\":\"times\",\"seconds\":[1e-12]}\n");
    const float offset =
        m == Misbehaviour::wrong || (m == Misbehaviour::faked && calls > 1) ? 1.0f : 0.0f;
    const int repeat = m == Misbehaviour::slow ? 4 : 1;
    for (int r = 0; r < repeat; ++r)
      for (std::size_t i = 0; i < kN; ++i) y[i] = 2.0f * x[i] + offset;
  };
  perf.measure(
      {.run = run,
       .poison = [&] { y.poison(); },
       .verify =
           [&] {
             // A faking kernel's code could make the check in its own process say "right".
             if (fakes && verified++ > 0) return workbook::CheckResult{};
             return workbook::check_elementwise(
                 y, [&](std::size_t i) { return 2.0 * x[i]; },
                 {.where = {"scale", "common/tests/perf_test_worker.cpp"},
                  .tolerance = workbook::Tolerance::exact()});
           },
       .output = workbook::perf::output_of(y, workbook::Tolerance::exact()),
       .runner = fixed_time(run, m == Misbehaviour::slow ? 4 * kCallSeconds : kCallSeconds)});
}

void good(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::none);
}
void slow(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::slow);
}
void not_implemented(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::not_implemented);
}
void crash(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::crash);
}
void wrong(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::wrong);
}
void stale(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::stale);
}
void overrun(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::overrun);
}
void faked(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::faked);
}
void skipped_when_timed(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::skipped_when_timed);
}
void tamper(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::tamper);
}
void hang(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::hang);
}
void spin(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::spin);
}
void ping_pong(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::ping_pong);
}
void chatty(workbook::perf::Case& perf) {
  scale(perf, Misbehaviour::chatty);
}
// Work spread over 2 threads, shown per element, with the same kernel "on one thread" as an extra
// (here simply run twice, and reported as twice the time: a speedup of 2). The same in both
// workers.
void parallel(workbook::perf::Case& perf) {
  workbook::AlignedVector<float> x(kN);
  workbook::fill_uniform(x, perf.rng());
  workbook::GuardedBuffer<float> y(kN);
  const workbook::Work work{.ops = double(kN), .bytes = 8.0 * kN, .threads = 2};
  auto once = [&] {
    for (std::size_t i = 0; i < kN; ++i) y[i] = 2.0f * x[i];
    asm volatile("" ::: "memory");  // two calls stay two loops
  };
  perf.describe("scale", "y = 2 x over 64 Ki floats, counted as work for 2 threads");
  perf.work(work);
  perf.per_item(kN, "element");
  const workbook::Work one_thread{.ops = work.ops, .bytes = work.bytes, .threads = 1};
  auto twice = [&] { once(), once(); };
  perf.extra({.label = "scale on 1 thread",
              .side = workbook::perf::Extra::Side::yours,
              .run = twice,
              .work = one_thread,
              .runner = fixed_time(twice, 2 * kCallSeconds)});
  perf.measure({.run = once,
                .poison = [&] { y.poison(); },
                .verify =
                    [&] {
                      return workbook::check_elementwise(
                          y, [&](std::size_t i) { return 2.0 * x[i]; },
                          {.where = {"scale", "common/tests/perf_test_worker.cpp"},
                           .tolerance = workbook::Tolerance::exact()});
                    },
                .output = workbook::perf::output_of(y, workbook::Tolerance::exact()),
                .runner = fixed_time(once, kCallSeconds)});
}

WORKBOOK_PERF_CASE(good);
WORKBOOK_PERF_CASE(parallel);
WORKBOOK_PERF_CASE(slow);
WORKBOOK_PERF_CASE(not_implemented);
WORKBOOK_PERF_CASE(crash);
WORKBOOK_PERF_CASE(wrong);
WORKBOOK_PERF_CASE(stale);
WORKBOOK_PERF_CASE(overrun);
WORKBOOK_PERF_CASE(faked);
WORKBOOK_PERF_CASE(skipped_when_timed);
WORKBOOK_PERF_CASE(tamper);
WORKBOOK_PERF_CASE(hang);
WORKBOOK_PERF_CASE(spin);
WORKBOOK_PERF_CASE(ping_pong);
WORKBOOK_PERF_CASE(chatty);

// --- Kernels that shape their timing: each case is honest in the good worker
// ---------------------- Each call burns a fixed amount of its thread's CPU time (which load cannot
// shorten) and reports its time on the host clock, as a lab's worker does (unless it lies): what is
// asserted of them is what the driver decides from CPU time, or from a difference of 2x or more.

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
void burn(double seconds) {
  for (const double end = thread_cpu_seconds() + seconds; thread_cpu_seconds() < end;) {
  }
}
// The host clock's runner, its times scaled by `factor` (1: honestly).
workbook::BatchRunner clock_timed(std::function<void()> run, double factor = 1) {
  return [runner = workbook::local_runner(std::move(run)), factor](int count) {
    std::vector<double> seconds = runner(count);
    for (double& s : seconds) s *= factor;
    return seconds;
  };
}

enum class Shaping {
  cached_by_content,  // keeps its last output, keyed on a hash of the input; computing is 2x slow
  cached_by_pointer,  // returns at once when called on the same input buffer; computing is 2x slow
  under_reported,     // works 2 ms a call, reports a quarter of it
  helper_threads,     // a call of a one-thread case works in two threads, 2 ms each; reports 1 ms
  spinner,            // honest calls, but leaves a thread spinning for ever after the first
  allocates,          // honest calls, each of which makes a 40 MiB std::vector (fresh pages)
};

// y = 2 x, plus 1 ms of work per call in the good worker; shaped as `how` in the bad one.
void shaped(workbook::perf::Case& perf, Shaping how) {
  workbook::AlignedVector<float> x(kN);
  workbook::fill_uniform(x, perf.rng());
  workbook::GuardedBuffer<float> y(kN);
  perf.describe("scale", "y = 2 x over 64 Ki floats, and 1 ms of work");
  perf.work({.ops = double(kN), .bytes = 8.0 * kN});
  auto compute = [&](double seconds) {
    for (std::size_t i = 0; i < kN; ++i) y[i] = 2.0f * x[i];
    burn(seconds);
  };
  static std::vector<float> kept;
  static std::uint64_t kept_hash = 0;
  static const float* kept_input = nullptr;
  static std::thread spinning;
  auto run = [&, how] {
    if (!kBad) return compute(1e-3);
    switch (how) {
      case Shaping::cached_by_content: {
        std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the input's bytes
        for (const float v : x) {
          std::uint32_t b;
          std::memcpy(&b, &v, sizeof b);
          h = (h ^ b) * 1099511628211ull;
        }
        if (h == kept_hash && kept.size() == kN) {
          std::memcpy(y.data(), kept.data(), kN * sizeof(float));
          return;
        }
        compute(2e-3);
        kept.assign(y.data(), y.data() + kN);
        kept_hash = h;
        return;
      }
      case Shaping::cached_by_pointer:
        if (x.data() == kept_input) return;
        compute(2e-3);
        kept_input = x.data();
        return;
      case Shaping::under_reported:
        return compute(2e-3);
      case Shaping::helper_threads: {
        std::thread helper([] { burn(2e-3); });
        compute(2e-3);
        helper.join();
        return;
      }
      case Shaping::allocates: {
        // Larger than glibc's largest mmap threshold (32 MiB): mapped afresh on every call.
        std::vector<float> scratch(10 << 20);
        scratch[x.size()] = x[0];
        compute(1e-3);
        return;
      }
      case Shaping::spinner:
        if (!spinning.joinable())
          spinning = std::thread([] {
            for (;;) asm volatile("" ::: "memory");
          });
        return compute(1e-3);
    }
  };
  workbook::BatchRunner runner = clock_timed(run);
  if (kBad && how == Shaping::under_reported) runner = clock_timed(run, 0.25);
  if (kBad && how == Shaping::helper_threads) runner = fixed_time(run, 1e-3);
  perf.measure({.run = run,
                .poison = [&] { y.poison(); },
                .verify =
                    [&] {
                      return workbook::check_elementwise(
                          y, [&](std::size_t i) { return 2.0 * x[i]; },
                          {.where = {"scale", "common/tests/perf_test_worker.cpp"},
                           .tolerance = workbook::Tolerance::exact()});
                    },
                .output = workbook::perf::output_of(y, workbook::Tolerance::exact()),
                .runner = runner});
  if (spinning.joinable()) spinning.detach();  // spins until the driver ends the worker
}
void cached_by_content(workbook::perf::Case& perf) {
  shaped(perf, Shaping::cached_by_content);
}
void cached_by_pointer(workbook::perf::Case& perf) {
  shaped(perf, Shaping::cached_by_pointer);
}
void under_reported(workbook::perf::Case& perf) {
  shaped(perf, Shaping::under_reported);
}
void helper_threads(workbook::perf::Case& perf) {
  shaped(perf, Shaping::helper_threads);
}
void spinner(workbook::perf::Case& perf) {
  shaped(perf, Shaping::spinner);
}
void allocates(workbook::perf::Case& perf) {
  shaped(perf, Shaping::allocates);
}
WORKBOOK_PERF_CASE(cached_by_content);
WORKBOOK_PERF_CASE(cached_by_pointer);
WORKBOOK_PERF_CASE(under_reported);
WORKBOOK_PERF_CASE(helper_threads);
WORKBOOK_PERF_CASE(spinner);
WORKBOOK_PERF_CASE(allocates);

// A case that cannot run on this machine (as a GPU case on a machine without a GPU), in both
// workers.
void skipped(workbook::perf::Case&) {
  throw workbook::Skipped("no CUDA device: skipped (a test of the skip)");
}
WORKBOOK_PERF_CASE(skipped);

// A case timed by its own runner (as a GPU case is, with CUDA events): the times it reports are
// the runner's, not the host clock's. It declares no output: the driver compares none.
void own_runner(workbook::perf::Case& perf) {
  std::vector<float> y(1, 0.0f);
  perf.describe("own_runner", "a kernel whose runner reports 1 ms per call");
  perf.work({.ops = 1e6, .bytes = 1e6});
  perf.measure(
      {.run = [&] { y[0] = 1; },
       .poison = [&] { y[0] = 0; },
       .verify = [&] { return workbook::CheckResult{}; },
       .runner =
           [&](int count) { return std::vector<double>(static_cast<std::size_t>(count), 1e-3); }});
}
WORKBOOK_PERF_CASE(own_runner);

}  // namespace
