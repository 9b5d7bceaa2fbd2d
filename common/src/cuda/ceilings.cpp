// The GPU's ceilings: small, well-understood kernels timed with the harness's own event timer.
#include <workbook/cuda/ceilings.hpp>

#include "kernels.hpp"

#include <workbook/cuda/check.hpp>
#include <workbook/cuda/device.hpp>
#include <workbook/cuda/memory.hpp>
#include <workbook/cuda/timer.hpp>
#include <workbook/report.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>

namespace workbook::cuda {
namespace {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

// The fastest of the timed runs: noise only ever slows a run down (as for the CPU's ceilings).
double best_seconds(std::function<void()> launch, L2 l2) {
  const Timing t =
      time_gpu(std::move(launch), {.warmup_seconds = 0.05, .min_runs = 10, .max_seconds = 0.3}, l2);
  return t.summary.min;
}

}  // namespace

Ceilings measure_ceilings(const Progress& progress) {
  require_device();
  const DeviceInfo d = device_info();
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  Ceilings c;
  c.machine = machine_info();
  c.device = d.fingerprint();
  c.measured_at = utc_now();
  c.threads = static_cast<unsigned>(d.sm_count);
  c.cache_knee_bytes = d.l2_bytes;
  c.int8_dot_instruction = "not measured on the GPU";
  say("GPU: " + d.describe());

  // Device memory: arrays of 1 GiB (less on a small GPU), 20 times the L2 of an H100, flushed
  // from the L2 before every run.
  const std::size_t n =
      std::min<std::size_t>(std::size_t{1} << 28, d.memory_bytes / 16 / sizeof(float)) / 4 * 4;
  const int blocks = d.sm_count * (d.max_threads_per_sm / detail::kThreads);
  DeviceBuffer<float> x(n), y(n), z(n), sink(1);
  // Never time zeros: 0x3F bytes are the float 0.747.
  WORKBOOK_CUDA_CHECK(cudaMemset(x.data(), 0x3F, x.bytes()));
  WORKBOOK_CUDA_CHECK(cudaMemset(z.data(), 0x3F, z.bytes()));
  const double bytes = double(n) * sizeof(float);

  const double memcpy_gbs =
      2 * bytes /
      best_seconds(
          [&] {
            WORKBOOK_CUDA_CHECK(
                cudaMemcpyAsync(y.data(), x.data(), x.bytes(), cudaMemcpyDeviceToDevice, nullptr));
          },
          L2::flush) /
      1e9;
  const double kernel_gbs =
      2 * bytes / best_seconds([&] { detail::copy(x.data(), y.data(), n, nullptr); }, L2::flush) /
      1e9;
  c.copy_all_gbs = std::max(memcpy_gbs, kernel_gbs);
  c.copy_1t_gbs = c.copy_regular_1t_gbs = c.copy_streaming_1t_gbs = c.copy_all_gbs;
  say("device copy, 2 x " + std::to_string(n >> 18) + " MiB: cudaMemcpy " +
      format_fixed(memcpy_gbs) + " GB/s, 16-byte copy kernel " + format_fixed(kernel_gbs) +
      " GB/s (read + write)");

  c.read_all_gbs = c.read_1t_gbs =
      bytes /
      best_seconds([&] { detail::read_all(x.data(), n, sink.data(), blocks, nullptr); },
                   L2::flush) /
      1e9;
  say("device reads: " + format_fixed(c.read_all_gbs) + " GB/s");
  c.triad_all_gbs = c.triad_1t_gbs =
      3 * bytes /
      best_seconds([&] { detail::triad(y.data(), x.data(), z.data(), 0.5f, n, blocks, nullptr); },
                   L2::flush) /
      1e9;
  say("device triad: " + format_fixed(c.triad_all_gbs) + " GB/s");

  // A copy whose 2 x L2/4 bytes stay in the L2 cache from one run to the next.
  const std::size_t m = std::max<std::size_t>(d.l2_bytes / 4 / sizeof(float) / 4 * 4, 1024);
  c.l1_read_1t_gbs = 2.0 * double(m) * sizeof(float) /
                     best_seconds([&] { detail::copy(x.data(), y.data(), m, nullptr); }, L2::keep) /
                     1e9;
  say("copy in L2, 2 x " + std::to_string(m * sizeof(float) >> 20) +
      " MiB: " + format_fixed(c.l1_read_1t_gbs) + " GB/s");

  const int rounds = 512;
  c.fma_all_gflops = c.fma_1t_gflops =
      detail::fma_chains_flop(rounds, blocks) /
      best_seconds([&] { detail::fma_chains(sink.data(), rounds, blocks, nullptr); }, L2::keep) /
      1e9;
  say("fp32 FMA peak: " + format_fixed(c.fma_all_gflops, 0) + " GFLOP/s");
  return c;
}

namespace {

// A cache is this GPU's when it was measured on a device with the same fingerprint.
bool this_gpu(const Ceilings& c) {
  return c.device == device_info().fingerprint();
}

}  // namespace

std::optional<Ceilings> load_ceilings(const std::string& path) {
  return workbook::load_ceilings(path, this_gpu);
}

Ceilings load_or_measure_ceilings(const std::string& path, bool remeasure,
                                  const Progress& progress) {
  require_device();
  return workbook::load_or_measure_ceilings(
      path, remeasure, progress, this_gpu, [](const Progress& p) { return measure_ceilings(p); },
      "GPU");
}

std::string default_ceilings_path() {
  if (const char* p = std::getenv("WORKBOOK_GPU_CEILINGS"); p != nullptr && *p != '\0') return p;
  return "workbook-gpu-ceilings.json";
}

void copy(const float* x, float* y, std::size_t n) {
  detail::copy(x, y, n, nullptr);
}

}  // namespace workbook::cuda
