// The ceilings' measuring kernels: compiled at full optimisation, like the labs' kernels.
#include <workbook/ceilings.hpp>

#include <workbook/simd.hpp>
#include <workbook/tensor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <latch>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace workbook {
namespace {

using Batch = xsimd::batch<float>;
constexpr std::size_t kLanes = Batch::size;
using Clock = std::chrono::steady_clock;

// --- The measuring kernels: as simple as possible, so that what they reach is the machine's
// --------- Each works on [begin, end) of its arrays, a multiple of kLanes, aligned.

enum class Stores { regular, streaming };

void copy(const float* x, float* y, std::size_t n, Stores stores) {
  if (stores == Stores::streaming) {
    for (std::size_t i = 0; i < n; i += kLanes) store_streaming(y + i, Batch::load_aligned(x + i));
    stream_fence();
  } else {
    for (std::size_t i = 0; i < n; i += kLanes) Batch::load_aligned(x + i).store_aligned(y + i);
  }
}

void triad(float* a, const float* b, const float* c, std::size_t n, Stores stores) {
  const Batch s(3.0f);
  if (stores == Stores::streaming) {
    for (std::size_t i = 0; i < n; i += kLanes)
      store_streaming(a + i, xsimd::fma(s, Batch::load_aligned(c + i), Batch::load_aligned(b + i)));
    stream_fence();
  } else {
    for (std::size_t i = 0; i < n; i += kLanes)
      xsimd::fma(s, Batch::load_aligned(c + i), Batch::load_aligned(b + i)).store_aligned(a + i);
  }
}

// Eight independent sums: enough loads in flight to saturate the load ports, not the adders.
float read_sum(const float* x, std::size_t n, int passes) {
  Batch acc[8] = {};
  const std::size_t whole = n / (8 * kLanes) * (8 * kLanes);
  for (int p = 0; p < passes; ++p) {
    for (std::size_t i = 0; i < whole; i += 8 * kLanes)
      for (int k = 0; k < 8; ++k) acc[k] += Batch::load_aligned(x + i + k * kLanes);
    for (std::size_t i = whole; i < n; i += kLanes) acc[0] += Batch::load_aligned(x + i);
  }
  for (int k = 1; k < 8; ++k) acc[0] += acc[k];
  return xsimd::hadd(acc[0]);
}

// Independent FMA chains hide the FMA latency (4-5 cycles) on two FMA units: 8 would do, and more
// leave a margin. The accumulators must stay in registers: anything that makes the compiler keep
// them in memory turns each FMA into load, FMA, store, and the loop runs at a fraction of the peak.
// So 16 where there are 32 vector registers (AVX-512), 12 where there are 16 (AVX2, SSE): 16 there,
// with the two operands, left 3 chains on the stack and measured half the peak on a Zen 3 (57
// GFLOP/s, where OpenBLAS sgemm ran at 87).
#if defined(__AVX512F__)
constexpr int kChains = 16;
#else
constexpr int kChains = 12;
#endif
float fma_chains(long iterations) {
  // Read through a volatile: the compiler cannot treat the call as a pure function of its argument
  // and fold repeated calls into one.
  volatile long opaque_iterations = iterations;
  const long n = opaque_iterations;
  Batch acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = Batch(1.0f + 1e-3f * static_cast<float>(k));
  const Batch m(0.999999f), a(1e-7f);
  for (long it = 0; it < n; ++it)
    for (int k = 0; k < kChains; ++k) acc[k] = xsimd::fma(acc[k], m, a);
  for (int k = 1; k < kChains; ++k) acc[0] += acc[k];
  return xsimd::hadd(acc[0]);
}

// int8 dot products: the instruction that multiplies unsigned by signed bytes and adds groups of
// four products into int32 lanes (vpdpbusd), or the two-instruction AVX2 sequence it replaced.
// 12 independent chains with AVX-512: enough for a 4-cycle latency at two per cycle. Not 16 as for
// the FMA: GCC 12 then shuffles the accumulators of this destructive instruction through extra
// moves and the stack on every iteration (see the disassembly), which measured half the real peak
// on Zen 5. 8 with AVX2, whose 16 registers must also hold the operands and temporaries.
// Even with 12, GCC 12 copies every accumulator to another register and back on each pass of the
// loop (2 moves per vpdpbusd, objdump -d): the loop over iterations is unrolled 8 times (below) so
// that those copies come once per 8 passes. Measured on Zen 5: 620-690 GOP/s with the copies,
// 880-900 without, and the reference GEMM itself reaches 800 (it was ">100% of the roof").
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
constexpr int kInt8Chains = 12;
using Int8Register = __m512i;
constexpr int kInt8BytesPerRegister = 64;
inline Int8Register int8_dot_step(Int8Register acc, Int8Register u, Int8Register s) {
  return _mm512_dpbusd_epi32(acc, u, s);
}
inline Int8Register int8_splat(int v) {
  return _mm512_set1_epi32(v);
}
inline Int8Register int8_bytes(char v) {
  return _mm512_set1_epi8(v);
}
#elif defined(__AVXVNNI__) || defined(__AVX2__)
constexpr int kInt8Chains = 8;
using Int8Register = __m256i;
constexpr int kInt8BytesPerRegister = 32;
inline Int8Register int8_dot_step(Int8Register acc, Int8Register u, Int8Register s) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  // u8 x s8 -> pairs summed to s16 (saturating), then pairs of s16 summed to s32 by multiplying
  // by 1.
  const __m256i pairs = _mm256_maddubs_epi16(u, s);
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
#endif
}
inline Int8Register int8_splat(int v) {
  return _mm256_set1_epi32(v);
}
inline Int8Register int8_bytes(char v) {
  return _mm256_set1_epi8(v);
}
#else
constexpr int kInt8Chains = 8;
using Int8Register = int;
constexpr int kInt8BytesPerRegister = 1;
inline Int8Register int8_dot_step(Int8Register acc, Int8Register u, Int8Register s) {
  return acc + u * s;
}
inline Int8Register int8_splat(int v) {
  return v;
}
inline Int8Register int8_bytes(char v) {
  return v;
}
#endif

// The sum of a register's int32 lanes (only to use the result; not timed). Unsigned: the lanes
// hold millions, their sum wraps, and a signed overflow would be undefined.
unsigned int8_sum(const Int8Register& v) {
  unsigned lanes[sizeof(Int8Register) / sizeof(unsigned)];
  std::memcpy(lanes, &v, sizeof v);
  unsigned s = 0;
  for (unsigned l : lanes) s += l;
  return s;
}

// Makes `v` opaque to the optimizer at no cost: no instruction, but its value may have changed.
inline void opaque(Int8Register& v) {
#if defined(__AVX512F__)
  asm volatile("" : "+v"(v));
#elif defined(__AVX2__)
  asm volatile("" : "+x"(v));
#else
  asm volatile("" : "+r"(v));
#endif
}

unsigned int8_dot_chains(long iterations) {
  volatile long opaque_iterations = iterations;  // see fma_chains
  const long n = opaque_iterations;
  Int8Register acc[kInt8Chains];
  for (int k = 0; k < kInt8Chains; ++k) acc[k] = int8_splat(k);
  Int8Register u = int8_bytes(3);
  const Int8Register s = int8_bytes(-2);
#pragma GCC unroll 8
  for (long it = 0; it < n; ++it)
    for (int k = 0; k < kInt8Chains; ++k) {
      acc[k] = int8_dot_step(acc[k], u, s);
      // The operand, as the compiler sees it, changes after every step (the empty asm claims to
      // write it): else it computes the AVX2 sequence's product of the constant u and s once for
      // all the chains, outside the loop, and times the additions alone (3.4x the real roof on a
      // Zen 3).
      opaque(u);
    }
  unsigned sum = 0;
  for (int k = 0; k < kInt8Chains; ++k) sum += int8_sum(acc[k]);
  return sum;
}

// --- Running them ------------------------------------------------------------------------------

// A ceiling is the best the machine did: noise (interrupts, a neighbour on a shared host) only
// ever slows a run down, so the fastest of several runs is the estimate of what it can do.
double best_seconds(int runs, const std::function<void()>& body) {
  body();
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    body();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

// The best wall time of `runs` runs of body(thread, threads) on `threads` threads, all starting
// each run together. The threads are started once, and a first run is not counted: a new thread
// starts on its parent's core, and the scheduler spreads the threads over the cores only after a
// while (timing fresh threads, and their creation with them, put the all-core copy roof a third
// below what lab 03's ReLU then reached on the same machine).
double best_on_threads(int runs, unsigned threads,
                       const std::function<void(unsigned, unsigned)>& body) {
  if (threads == 1) return best_seconds(runs, [&] { body(0, 1); });
  // A pair of latches per run: this thread opens `start`, the team counts `done` down.
  const std::size_t all_runs = static_cast<std::size_t>(runs) + 1;
  std::vector<std::unique_ptr<std::latch>> start(all_runs), done(all_runs);
  for (std::size_t r = 0; r < all_runs; ++r) {
    start[r] = std::make_unique<std::latch>(1);
    done[r] = std::make_unique<std::latch>(threads);
  }
  std::vector<std::jthread> team;
  for (unsigned t = 0; t < threads; ++t)
    team.emplace_back([&, t] {
      for (std::size_t r = 0; r < all_runs; ++r) {
        start[r]->wait();
        body(t, threads);
        done[r]->count_down();
      }
    });
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < all_runs; ++r) {
    const auto begin = Clock::now();
    start[r]->count_down();
    done[r]->wait();
    if (r > 0) best = std::min(best, std::chrono::duration<double>(Clock::now() - begin).count());
  }
  return best;
}

// The slice [begin, end) of n elements thread t of `threads` works on, in whole batches.
std::pair<std::size_t, std::size_t> slice(std::size_t n, unsigned t, unsigned threads) {
  const std::size_t batches = n / kLanes;
  return {batches * t / threads * kLanes, batches * (t + 1) / threads * kLanes};
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

std::string gbs(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

}  // namespace

Ceilings measure_ceilings(const Progress& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  Ceilings c;
  c.machine = machine_info();
  c.measured_at = now_utc();
  c.threads = c.machine.logical_cpus;

  // Where do the caches end? Copy bandwidth against working set: it falls from cache speed to
  // memory speed. The OS's cache sizes can mislead (a VM may report the whole socket's L3).
  say("cache knee: copy bandwidth against working-set size ...");
  constexpr std::size_t kMaxSet = std::size_t{256} << 20;  // bytes per buffer at the largest step
  AlignedVector<float> x(kMaxSet / sizeof(float), 1.0f), y(x.size(), 0.0f);
  std::vector<std::pair<std::size_t, double>> curve;  // (working-set bytes, GB/s)
  for (std::size_t bytes = std::size_t{256} << 10; bytes <= kMaxSet; bytes *= 2) {
    const std::size_t n = bytes / sizeof(float);
    const int runs =
        static_cast<int>(std::clamp<std::size_t>((std::size_t{1} << 30) / bytes, 5, 200));
    const double s = best_seconds(runs, [&] { copy(x.data(), y.data(), n, Stores::regular); });
    curve.emplace_back(2 * bytes, 2.0 * static_cast<double>(bytes) / s / 1e9);
  }
  const double memory_speed = curve.back().second;
  c.cache_knee_bytes = curve.back().first;
  for (auto it = curve.rbegin(); it != curve.rend(); ++it) {
    if (it->second > 1.2 * memory_speed) break;
    c.cache_knee_bytes = it->first;
  }
  say("cache knee: bandwidth is within 20% of memory's from a working set of " +
      std::to_string(c.cache_knee_bytes >> 20) + " MiB on (the OS reports an L3 of " +
      std::to_string(c.machine.l3_bytes >> 20) + " MiB)");

  // Memory bandwidth: working sets well past the knee.
  const std::size_t n = x.size();
  const double copy_bytes = 2.0 * static_cast<double>(n) * sizeof(float);
  auto copy_rate = [&](unsigned threads, Stores stores) {
    const double s = best_on_threads(7, threads, [&](unsigned t, unsigned all) {
      const auto [b, e] = slice(n, t, all);
      copy(x.data() + b, y.data() + b, e - b, stores);
    });
    return copy_bytes / s / 1e9;
  };
  // The threads can also take 4 MiB pieces in turn (thread t the pieces t, t + threads, ...), as a
  // parallel loop with several chunks per thread does: on our 2-core virtual machine, lab 03's
  // bench once ran a ReLU 1.6 times as fast that way as in two far-apart halves. The roof is the
  // better of the two.
  constexpr std::size_t kPiece = std::size_t{1} << 20;  // floats
  auto copy_rate_in_pieces = [&](unsigned threads, Stores stores) {
    const double s = best_on_threads(7, threads, [&](unsigned t, unsigned all) {
      for (std::size_t b = t * kPiece; b < n; b += all * kPiece)
        copy(x.data() + b, y.data() + b, std::min(kPiece, n - b), stores);
    });
    return copy_bytes / s / 1e9;
  };
  c.copy_regular_1t_gbs = copy_rate(1, Stores::regular);
  say("copy, 1 thread, ordinary stores: " + gbs(c.copy_regular_1t_gbs) + " GB/s");
  c.copy_streaming_1t_gbs = copy_rate(1, Stores::streaming);
  say("copy, 1 thread, streaming stores: " + gbs(c.copy_streaming_1t_gbs) + " GB/s");
  c.copy_1t_gbs = std::max(c.copy_regular_1t_gbs, c.copy_streaming_1t_gbs);
  c.copy_all_gbs = 0;
  for (Stores stores : {Stores::regular, Stores::streaming})
    c.copy_all_gbs = std::max(
        {c.copy_all_gbs, copy_rate(c.threads, stores), copy_rate_in_pieces(c.threads, stores)});
  say("copy, " + std::to_string(c.threads) + " threads: " + gbs(c.copy_all_gbs) + " GB/s");

  AlignedVector<float> z(n, 2.0f);
  const double triad_bytes = 3.0 * static_cast<double>(n) * sizeof(float);
  auto triad_rate = [&](unsigned threads) {
    double best = 0;
    for (Stores stores : {Stores::regular, Stores::streaming}) {
      const double s = best_on_threads(7, threads, [&](unsigned t, unsigned all) {
        const auto [b, e] = slice(n, t, all);
        triad(y.data() + b, x.data() + b, z.data() + b, e - b, stores);
      });
      best = std::max(best, triad_bytes / s / 1e9);
    }
    return best;
  };
  c.triad_1t_gbs = triad_rate(1);
  say("triad, 1 thread: " + gbs(c.triad_1t_gbs) + " GB/s");
  c.triad_all_gbs = triad_rate(c.threads);
  say("triad, " + std::to_string(c.threads) + " threads: " + gbs(c.triad_all_gbs) + " GB/s");
  auto read_rate = [&](unsigned threads) {
    const double s = best_on_threads(7, threads, [&](unsigned t, unsigned all) {
      const auto [b, e] = slice(n, t, all);
      volatile float sink = read_sum(x.data() + b, e - b, 1);  // one per thread: no shared write
      (void)sink;
    });
    return static_cast<double>(n) * sizeof(float) / s / 1e9;
  };
  c.read_1t_gbs = read_rate(1);
  say("reads, 1 thread: " + gbs(c.read_1t_gbs) + " GB/s");
  c.read_all_gbs = read_rate(c.threads);
  say("reads, " + std::to_string(c.threads) + " threads: " + gbs(c.read_all_gbs) + " GB/s");

  // On a shared host memory bandwidth drifts from second to second: sample the one-thread copy
  // again, a second later, and keep the better of the two.
  c.copy_regular_1t_gbs = std::max(c.copy_regular_1t_gbs, copy_rate(1, Stores::regular));
  c.copy_streaming_1t_gbs = std::max(c.copy_streaming_1t_gbs, copy_rate(1, Stores::streaming));
  c.copy_1t_gbs = std::max(c.copy_regular_1t_gbs, c.copy_streaming_1t_gbs);
  say("copy, 1 thread, sampled again: " + gbs(c.copy_1t_gbs) + " GB/s");
  x = {};
  y = {};
  z = {};

  // L1: 16 KiB, a third of the smallest L1 data cache in use, read over and over.
  {
    AlignedVector<float> small(4096, 1.0f);
    const int passes = 20000;
    volatile float sink = 0;
    const double s = best_seconds(5, [&] { sink = read_sum(small.data(), small.size(), passes); });
    c.l1_read_1t_gbs = static_cast<double>(small.size() * sizeof(float)) * passes / s / 1e9;
    say("L1 loads, 1 thread: " + gbs(c.l1_read_1t_gbs) + " GB/s");
  }

  // FMA peak.
  const long iterations = 2'000'000;
  const double flop = 2.0 * kChains * kLanes * static_cast<double>(iterations);
  auto fma_rate = [&](unsigned threads) {
    const double s = best_on_threads(5, threads, [&](unsigned, unsigned) {
      volatile float sink = fma_chains(iterations);
      (void)sink;
    });
    return threads * flop / s / 1e9;
  };
  c.fma_1t_gflops = fma_rate(1);
  say("fp32 FMA, 1 core: " + gbs(c.fma_1t_gflops) + " GFLOP/s");
  c.fma_all_gflops = fma_rate(c.threads);
  say("fp32 FMA, " + std::to_string(c.threads) + " threads: " + gbs(c.fma_all_gflops) + " GFLOP/s");

  // int8 dot-product peak: each byte lane is one multiply and one add, 2 OP.
  const long int8_iterations = kInt8BytesPerRegister > 1 ? 2'000'000 : 20'000'000;
  const double int8_ops =
      2.0 * kInt8Chains * kInt8BytesPerRegister * static_cast<double>(int8_iterations);
  auto int8_rate = [&](unsigned threads) {
    const double s = best_on_threads(5, threads, [&](unsigned, unsigned) {
      volatile unsigned sink = int8_dot_chains(int8_iterations);
      (void)sink;
    });
    return threads * int8_ops / s / 1e9;
  };
  c.int8_dot_instruction = int8_dot_instruction();
  c.int8_dot_1t_gops = int8_rate(1);
  say("int8 dot (" + c.int8_dot_instruction + "), 1 core: " + gbs(c.int8_dot_1t_gops) + " GOP/s");
  c.int8_dot_all_gops = int8_rate(c.threads);
  say("int8 dot, " + std::to_string(c.threads) + " threads: " + gbs(c.int8_dot_all_gops) +
      " GOP/s");
  return c;
}

const char* int8_dot_instruction() {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  return "AVX-512 VNNI vpdpbusd";
#elif defined(__AVXVNNI__)
  return "AVX-VNNI vpdpbusd";
#elif defined(__AVX2__)
  return "AVX2 vpmaddubsw + vpmaddwd";
#else
  return "scalar";
#endif
}

void copy_streaming(std::span<const float> x, std::span<float> y) {
  if (x.size() != y.size() || !simd_aligned(y.data()))
    throw std::invalid_argument("copy_streaming: y must be as long as x and 64-byte aligned");
  const std::size_t whole = x.size() / kLanes * kLanes;
  for (std::size_t i = 0; i < whole; i += kLanes)
    store_streaming(&y[i], Batch::load_unaligned(&x[i]));
  stream_fence();
  for (std::size_t i = whole; i < x.size(); ++i) y[i] = x[i];
}

}  // namespace workbook
