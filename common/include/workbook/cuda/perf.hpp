#pragma once
/// \file cuda/perf.hpp
/// \brief GPU perf cases and benches: kernels handed to the harness with the GPU's event timer,
/// and main() of a GPU lab's bench.
///
/// \code
/// perf.measure(workbook::cuda::gpu_kernel([&] { lab05::square(x, y.data(), n); },
///                                         [&] { y.poison(); }, [&] { return check(y.fetch()); },
///                                         workbook::cuda::output_of(y, tolerance)));
/// \endcode

#include <workbook/bench.hpp>
#include <workbook/cuda/ceilings.hpp>
#include <workbook/cuda/memory.hpp>
#include <workbook/cuda/timer.hpp>
#include <workbook/perf.hpp>
#include <workbook/skip.hpp>

#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>

namespace workbook::cuda {

/// A GPU output, for the driver's check of a timed call (see perf::Output): copied to the host by
/// DeviceOutput::fetch, which waits for the GPU, after the batch (outside the timed runs).
template <class T>
perf::Output output_of(DeviceOutput<T>& y, Tolerance tolerance = Tolerance::exact(),
                       std::function<double(std::size_t)> scale = {}) {
  return {perf::element_of<T>(), y.size(),
          [&y](std::span<std::byte> to) {
            const GuardedBuffer<T>& host = y.fetch();
            std::memcpy(to.data(), host.data(), host.size() * sizeof(T));
          },
          std::move(tolerance), std::move(scale)};
}

/// A perf case's kernel on the GPU: `launch` enqueues the work; the harness times it with
/// gpu_runner (the GPU's own timestamps, the L2 flushed before each run) instead of the host clock.
/// `output` (see output_of above) is what the driver compares with the reference's.
inline perf::Kernel gpu_kernel(std::function<void()> launch, std::function<void()> poison,
                               std::function<CheckResult()> verify, perf::Output output = {}) {
  BatchRunner runner = gpu_runner(launch);
  return {std::move(launch), std::move(poison), std::move(verify), std::move(output), std::move(runner)};
}

/// One version of a GPU bench, timed like gpu_kernel.
inline Bench::Version bench_version(std::string label, std::function<void()> launch, bool reference = false) {
  BatchRunner runner = gpu_runner(launch);
  return {std::move(label), std::move(launch), reference, std::move(runner)};
}

/// main() of a GPU lab's bench: the GPU's ceilings (`--ceilings FILE`, default the GPU's cache),
/// `body` adds the groups, then the table, the JSON records and the plot (`--results DIR`).
/// Without a GPU: "no CUDA device: skipped" and kSkipReturnCode.
inline int bench_main(const std::string& lab, int argc, char** argv, const std::function<void(Bench&)>& body) {
  std::string ceilings_path;
  std::filesystem::path results;
  if (!parse_bench_arguments(argc, argv, ceilings_path, results)) return 2;
  if (ceilings_path == workbook::default_ceilings_path()) ceilings_path = default_ceilings_path();
  try {
    Bench bench(lab, load_or_measure_ceilings(ceilings_path, false, [](const std::string& line) {
                  std::cerr << "  " << line << "\n";
                }));
    body(bench);
    bench.finish(std::cout, results);
    return 0;
  } catch (const Skipped& e) {
    std::cout << e.what() << "\n";
    return kSkipReturnCode;
  }
}

}  // namespace workbook::cuda
