// A perf worker for the harness's own tests, built twice: with WORKBOOK_TEST_WORKER_BAD=0 every
// case behaves; with 1, each misbehaves the way it is named (slow, crash, hang, ...), so the
// driver's handling of each failure can be tested against the well-behaved one.
#include <workbook/not_implemented.hpp>
#include <workbook/perf.hpp>
#include <workbook/skip.hpp>
#include <workbook/tensor.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

constexpr bool kBad = WORKBOOK_TEST_WORKER_BAD;
constexpr std::size_t kN = std::size_t{1} << 16;

enum class Misbehaviour { none, slow, not_implemented, crash, wrong, stale, hang, chatty };

// y = 2 x, done the way `m` says when this is the bad worker.
void scale(workbook::perf::Case& perf, Misbehaviour m) {
  workbook::AlignedVector<float> x(kN);
  workbook::fill_uniform(x, perf.rng());
  workbook::GuardedBuffer<float> y(kN);
  if (!kBad) m = Misbehaviour::none;
  int calls = 0;
  perf.describe("scale", "y = 2 x over 64 Ki floats");
  perf.work({.ops = double(kN), .bytes = 8.0 * kN});
  perf.hint(0.5, "a test hint");
  perf.extra({.label = "memcpy baseline", .run = [&] { std::memcpy(y.data(), x.data(), kN * sizeof(float)); },
              .work = {.ops = 0, .bytes = 8.0 * kN}});
  perf.measure({.run =
                    [&] {
                      ++calls;
                      if (m == Misbehaviour::not_implemented) throw workbook::NotImplemented("scale");
                      if (m == Misbehaviour::crash && calls == 3) std::abort();
                      if (m == Misbehaviour::hang && calls == 3) std::this_thread::sleep_for(std::chrono::hours(1));
                      if (m == Misbehaviour::stale && calls > 1) return;  // "caches" its first answer
                      if (m == Misbehaviour::chatty) std::printf("{\"type\":\"times\",\"seconds\":[1e-12]}\n");
                      const int repeat = m == Misbehaviour::slow ? 4 : 1;
                      for (int r = 0; r < repeat; ++r)
                        for (std::size_t i = 0; i < kN; ++i) y[i] = 2.0f * x[i] + (m == Misbehaviour::wrong ? 1.0f : 0.0f);
                    },
                .poison = [&] { y.poison(); },
                .verify = [&] {
                  return workbook::check_elementwise(y, [&](std::size_t i) { return 2.0 * x[i]; },
                                                     {.where = {"scale", "common/tests/perf_test_worker.cpp"},
                                                      .tolerance = workbook::Tolerance::exact()});
                }});
}

void good(workbook::perf::Case& perf) { scale(perf, Misbehaviour::none); }
void slow(workbook::perf::Case& perf) { scale(perf, Misbehaviour::slow); }
void not_implemented(workbook::perf::Case& perf) { scale(perf, Misbehaviour::not_implemented); }
void crash(workbook::perf::Case& perf) { scale(perf, Misbehaviour::crash); }
void wrong(workbook::perf::Case& perf) { scale(perf, Misbehaviour::wrong); }
void stale(workbook::perf::Case& perf) { scale(perf, Misbehaviour::stale); }
void hang(workbook::perf::Case& perf) { scale(perf, Misbehaviour::hang); }
void chatty(workbook::perf::Case& perf) { scale(perf, Misbehaviour::chatty); }
// Work spread over 2 threads, shown per element, with the same kernel "on one thread" as an extra
// (here simply run twice, so that the speedup is about 2). The same in both workers.
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
  perf.extra({.label = "scale on 1 thread",
              .side = workbook::perf::Extra::Side::yours,
              .run = [&] { once(), once(); },
              .work = {.ops = work.ops, .bytes = work.bytes, .threads = 1}});
  perf.measure({.run = once,
                .poison = [&] { y.poison(); },
                .verify = [&] {
                  return workbook::check_elementwise(y, [&](std::size_t i) { return 2.0 * x[i]; },
                                                     {.where = {"scale", "common/tests/perf_test_worker.cpp"},
                                                      .tolerance = workbook::Tolerance::exact()});
                }});
}

WORKBOOK_PERF_CASE(good);
WORKBOOK_PERF_CASE(parallel);
WORKBOOK_PERF_CASE(slow);
WORKBOOK_PERF_CASE(not_implemented);
WORKBOOK_PERF_CASE(crash);
WORKBOOK_PERF_CASE(wrong);
WORKBOOK_PERF_CASE(stale);
WORKBOOK_PERF_CASE(hang);
WORKBOOK_PERF_CASE(chatty);

// A case that cannot run on this machine (as a GPU case on a machine without a GPU), in both workers.
void skipped(workbook::perf::Case&) { throw workbook::Skipped("no CUDA device: skipped (a test of the skip)"); }
WORKBOOK_PERF_CASE(skipped);

// A case timed by its own runner (as a GPU case is, with CUDA events): the times it reports are
// the runner's, not the host clock's.
void own_runner(workbook::perf::Case& perf) {
  std::vector<float> y(1, 0.0f);
  perf.describe("own_runner", "a kernel whose runner reports 1 ms per call");
  perf.work({.ops = 1e6, .bytes = 1e6});
  perf.measure({.run = [&] { y[0] = 1; },
                .poison = [&] { y[0] = 0; },
                .verify = [&] { return workbook::CheckResult{}; },
                .runner = [&](int count) { return std::vector<double>(static_cast<std::size_t>(count), 1e-3); }});
}
WORKBOOK_PERF_CASE(own_runner);

}  // namespace
