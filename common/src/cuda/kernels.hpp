#pragma once
// The harness's own GPU kernels (kernels.cu), launched from its host code: the L2 flush, the
// kernel of known length, and the kernels behind the GPU ceilings.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace workbook::cuda::detail {

/// Blocks of kThreads threads: a multiple of the warp size that every GPU runs 8 of per SM.
inline constexpr int kThreads = 256;

/// Reads n floats (a 16-byte aligned buffer) and writes nothing unless their sum is 12345.678:
/// a read that the compiler cannot remove, and that leaves only clean lines in the L2 cache.
void read_all(const float* buffer, std::size_t n, float* sink, int blocks, cudaStream_t stream);
/// Launches the empty kernel workbook_cupti_begin_run (or _end_run) that delimits a timed run.
void mark_run(bool begin, cudaStream_t stream);
inline constexpr const char* kBeginRun = "workbook_cupti_begin_run";
inline constexpr const char* kEndRun = "workbook_cupti_end_run";
/// One thread spins until the global timer has advanced by `nanoseconds`.
void spin(std::uint64_t nanoseconds, cudaStream_t stream);
/// y = x, 16 bytes per load and store, two in flight per thread, a grid that covers the array
/// (x, y 16-byte aligned): on the H100 as fast as cudaMemcpy, and a few % faster than a one-wave
/// grid-stride loop (lab 05 measures why).
void copy(const float* x, float* y, std::size_t n, cudaStream_t stream);
/// a = b + s c, like copy.
void triad(float* a, const float* b, const float* c, float s, std::size_t n, int blocks,
           cudaStream_t stream);
/// Each thread runs 8 independent chains of `rounds` x 16 fused multiply-adds.
void fma_chains(float* sink, int rounds, int blocks, cudaStream_t stream);
/// FLOP of one fma_chains launch.
inline double fma_chains_flop(int rounds, int blocks) {
  return 2.0 * 8 * 16 * rounds * double(blocks) * kThreads;
}

}  // namespace workbook::cuda::detail
