// Lab 01 bench: every version of the kernels against this machine's measured ceilings.
// Run: cmake --workflow --preset bench   (it prints this table and writes JSON and a plot)
#include "vector_ops.hpp"
#include "versions.hpp"

#include <workbook/bench.hpp>
#include <workbook/ceilings.hpp>
#include <workbook/tensor.hpp>

#include <iostream>

namespace {

namespace v = lab01::versions;
using workbook::Bench;
using workbook::Traffic;

// The L1 groups make many calls per timed run, so that a call of a few microseconds is not lost in
// the clock's own overhead.
constexpr int kCalls = 512;
template <class Kernel, class... Args>
std::function<void()> repeated(Kernel kernel, Args&... args) {
  return [=, &args...] {
    for (int c = 0; c < kCalls; ++c) kernel(args...);
  };
}

}  // namespace

int main(int argc, char** argv) {
  std::string ceilings_path;
  std::filesystem::path results;
  if (!workbook::parse_bench_arguments(argc, argv, ceilings_path, results)) return 2;
  Bench bench("lab01", workbook::load_or_measure_ceilings(ceilings_path, false));
  workbook::Rng rng(workbook::seed_for("lab01.bench"));

  {  // ReLU from memory: 8 bytes and 1 operation per element, far past the caches.
    const std::size_t n = std::size_t{64} << 20;
    workbook::AlignedVector<float> x(n), y(n);
    workbook::fill_uniform(x, rng);
    bench.compare("relu, 64 Mi floats", {.ops = double(n), .bytes = 8.0 * n},
                  {{"v1 scalar", [&] { v::relu_v1_scalar(x, y); }},
                   {"v2 auto-vectorized", [&] { v::relu_v2_autovectorized(x, y); }},
                   {"v3 xsimd", [&] { v::relu_v3_xsimd(x, y); }},
                   {"v4 streaming stores", [&] { lab01::relu(x, y); }, Bench::kReference},
                   {"copy (the probe's kernel)", [&] { workbook::copy_streaming(x, y); }}});
  }
  {  // The same kernels on 4 Ki floats that stay in L1: now the core's load and store ports bind.
    const std::size_t n = 4096;
    workbook::AlignedVector<float> x(n), y(n);
    workbook::fill_uniform(x, rng);
    std::span<const float> in = x;
    std::span<float> out = y;
    bench.compare("relu, 4 Ki floats in L1", {.ops = double(n) * kCalls, .bytes = 8.0 * n * kCalls, .traffic = Traffic::l1},
                  {{"v1 scalar", repeated(v::relu_v1_scalar, in, out)},
                   {"v3 xsimd", repeated(v::relu_v3_xsimd, in, out)},
                   {"v4 reference", repeated(lab01::relu, in, out), Bench::kReference}});
  }
  {  // Binary elementwise kernels: 12 bytes per element, two streams in and one out, like triad.
    const std::size_t n = std::size_t{32} << 20;
    workbook::AlignedVector<float> a(n), b(n), out(n);
    workbook::fill_uniform(a, rng);
    workbook::fill_uniform(b, rng);
    bench.compare("add, 32 Mi floats", {.ops = double(n), .bytes = 12.0 * n, .traffic = Traffic::triad},
                  {{"reference", [&] { lab01::add(a, b, out); }, Bench::kReference}});
    bench.compare("squared_difference, 32 Mi", {.ops = 2.0 * n, .bytes = 12.0 * n, .traffic = Traffic::triad},
                  {{"reference", [&] { lab01::squared_difference(a, b, out); }, Bench::kReference}});
  }
  {  // Reductions in L1: bound by the core. One accumulator waits on the FMA latency.
    const std::size_t n = 4096;
    workbook::AlignedVector<float> x(n), y(n);
    workbook::fill_uniform(x, rng);
    workbook::fill_uniform(y, rng);
    std::span<const float> a = x, b = y;
    const workbook::Work work{.ops = 2.0 * n * kCalls, .bytes = 8.0 * n * kCalls, .traffic = Traffic::l1};
    bench.compare("dot, 4 Ki floats in L1", work,
                  {{"v1 scalar", repeated(v::dot_v1_scalar, a, b)},
                   {"v2 1 accumulator", repeated(v::dot_v2_one_accumulator, a, b)},
                   {"v3 2 accumulators", repeated(v::dot_v3_two_accumulators, a, b)},
                   {"v4 4 accumulators", repeated(lab01::dot, a, b), Bench::kReference},
                   {"v5 8 accumulators", repeated(v::dot_v5_eight_accumulators, a, b)}});
    bench.compare("euclidean_distance, 4 Ki in L1", {.ops = 3.0 * n * kCalls, .bytes = 8.0 * n * kCalls, .traffic = Traffic::l1},
                  {{"reference", repeated(lab01::euclidean_distance, a, b), Bench::kReference}});
  }
  {  // The dot product from memory: a quarter FLOP per byte, so memory bound, and reads only.
    const std::size_t n = std::size_t{64} << 20;
    workbook::AlignedVector<float> a(n), b(n);
    workbook::fill_uniform(a, rng);
    workbook::fill_uniform(b, rng);
    bench.compare("dot, 64 Mi floats", {.ops = 2.0 * n, .bytes = 8.0 * n, .traffic = Traffic::read},
                  {{"reference", [&] { lab01::dot(a, b); }, Bench::kReference}});
  }
  bench.finish(std::cout, results);
  return 0;
}
