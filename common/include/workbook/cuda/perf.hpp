#pragma once
/// \file cuda/perf.hpp
/// \brief GPU perf cases and benches: kernels handed to the harness with the GPU's event timer,
/// and main() of a GPU lab's bench (the lab's perf cases, see bench.hpp).
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
  return {std::move(launch), std::move(poison), std::move(verify), std::move(output),
          std::move(runner)};
}

/// main() of a GPU lab's bench: LabBench::main with the GPU's ceilings (`--ceilings FILE`, default
/// the GPU's cache). Without a GPU: "no CUDA device: skipped" and kSkipReturnCode.
inline int bench_main(const LabBench& bench, int argc, char** argv) {
  return bench.main(argc, argv, [](const std::string& path) {
    return load_or_measure_ceilings(
        path == workbook::default_ceilings_path() ? default_ceilings_path() : path, false,
        [](const std::string& line) { std::cerr << "  " << line << "\n"; });
  });
}

}  // namespace workbook::cuda
