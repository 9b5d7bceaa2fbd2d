#pragma once
/// \file cuda/timer.hpp
/// \brief GPU timing done honestly: CUDA events around each run, the L2 cache flushed before it,
/// warm-up, adaptive repeats, median and spread (the statistics of workbook/timing.hpp).
///
/// A kernel launch returns before the kernel runs, so a host clock around it measures the launch,
/// not the kernel. Events are timestamps the GPU itself records in the stream, before and after the
/// work. Between runs the harness reads a buffer twice the size of the L2 cache, so that each run
/// starts with its data in device memory, as it would in a real program (an input that stayed in
/// the 50 MB L2 of an H100 would be read 2-3x faster than memory allows). The flush only reads,
/// so it leaves no dirty lines that the timed kernel would have to write back.

#include <workbook/timing.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

namespace workbook::cuda {

/// What happens to the L2 cache between timed runs.
enum class L2 {
  flush,  ///< evicted before each run: the data comes from device memory (the default)
  keep,   ///< left as the previous run left it: for work that is meant to live in the cache
};

/// A runner (see timing.hpp) for GPU work: `launch` enqueues the work on the default stream and
/// returns (as a kernel launch does). Each run is recorded between two events after an optional L2
/// flush; a batch of runs is enqueued back to back and waited for once. Returns each run's seconds
/// as the events measured them. Launch errors and errors inside the kernels throw cuda::Error.
BatchRunner event_runner(std::function<void()> launch, L2 l2 = L2::flush);

/// time_runs(event_runner(launch, l2), options): warm-up, then batches until the spread converges.
Timing time_gpu(std::function<void()> launch, const TimingOptions& options = {}, L2 l2 = L2::flush);

/// Evicts the L2 cache by reading a buffer twice its size (enqueued on the default stream).
void flush_l2();

/// A kernel of known length, to test timers with: one thread spins until the GPU's global timer
/// has advanced by `nanoseconds` (enqueued on `stream`).
void spin(std::uint64_t nanoseconds, cudaStream_t stream = nullptr);

}  // namespace workbook::cuda
