#pragma once
/// \file cuda/timer.hpp
/// \brief GPU timing done honestly: the GPU's own timestamps of each run (CUPTI kernel records, or
/// CUDA events), the L2 cache flushed before it, warm-up, adaptive repeats, median and spread (the
/// statistics of workbook/timing.hpp).
///
/// A kernel launch returns before the kernel runs, so a host clock around it measures the launch,
/// not the kernel. Events are timestamps the GPU itself records in the stream, before and after the
/// work; but recording them costs 1.5-2 microseconds of GPU time, which a 5 us kernel cannot hide.
/// CUPTI's activity records carry the start and end of each kernel as the GPU timed it, the same
/// clock Nsight Compute's gpu__time_duration reads: the harness uses them when CUPTI is there, and
/// events otherwise (under ncu or compute-sanitizer, which hold CUPTI themselves). Between runs the
/// harness reads a buffer twice the size of the L2 cache, so that each run starts with its data in
/// device memory, as it would in a real program (an input that stayed in the 50 MB L2 of an H100
/// would be read 2-3x faster than memory allows). The flush only reads, so it leaves no dirty lines
/// that the timed kernel would have to write back.

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

/// A runner that times each run from the start of its first GPU operation (kernel, memcpy or
/// memset) to the end of its last, as CUPTI's activity records report them. Null when CUPTI cannot
/// be used here (not installed, or held by a profiler or sanitizer). A run that enqueues no GPU
/// work throws cuda::Error.
BatchRunner kernel_runner(std::function<void()> launch, L2 l2 = L2::flush);

/// The best runner available: kernel_runner, else event_runner.
BatchRunner gpu_runner(std::function<void()> launch, L2 l2 = L2::flush);

/// What gpu_runner times with here: "CUPTI kernel timestamps" or "CUDA events".
const char* gpu_timer();

/// time_runs(gpu_runner(launch, l2), options): warm-up, then batches until the spread converges.
Timing time_gpu(std::function<void()> launch, const TimingOptions& options = {}, L2 l2 = L2::flush);

/// Evicts the L2 cache by reading a buffer twice its size (enqueued on the default stream).
void flush_l2();

/// A kernel of known length, to test timers with: one thread spins until the GPU's global timer
/// has advanced by `nanoseconds` (enqueued on `stream`).
void spin(std::uint64_t nanoseconds, cudaStream_t stream = nullptr);

}  // namespace workbook::cuda
