// Lab 06 performance spec: what each perf test times, the work the roofline counts, and advice.
// `ctest --preset lab06 -L perf` compares your normalize with the reference, interleaved, both
// timed with CUDA events and the L2 cache flushed before every run; `lab06_perf` times yours alone,
// `lab06_perf --ncu normalize_16384x1024` adds Nsight Compute's view.
// Each case calls normalize through perf.timed(lab06::normalize): here that is yours (or the
// reference's); the lab's bench times the handout's numbered versions in its place, on the same
// inputs, which is where the handout's table comes from.
#include "normalize.hpp"
#include "normalize_launch.hpp"
#include "normalize_oracle.hpp"

#include <workbook/buffer.hpp>
#include <workbook/cuda/device.hpp>
#include <workbook/cuda/launches.hpp>
#include <workbook/cuda/memory.hpp>
#include <workbook/cuda/perf.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace {

namespace cuda = workbook::cuda;

// The work of one call, counted from the algorithm: per element an add for the sum, a subtract and
// a fused multiply-add for the squared deviations, a subtract and a multiply to normalize: 6 FLOP
// (the per-row division and square root are negligible); x read once and y written once, 8 bytes.
// Intensity 0.75 FLOP/byte, far left of the H100's ridge (about 21): memory bound.
void normalize_case(workbook::perf::Case& perf, std::size_t rows, std::size_t cols,
                    const std::string& about) {
  cuda::require_device();
  const std::size_t n = rows * cols;
  workbook::AlignedVector<float> x(n);
  workbook::fill_uniform(x, perf.rng(), -3.0, 5.0);
  const auto dx = cuda::to_device<float>(x);
  cuda::DeviceOutput<float> y(n);
  const auto normalize = perf.timed(lab06::normalize);
  auto launch = [&] { normalize(dx.data(), y.data(), rows, cols, lab06::kEps); };
  perf.describe("normalize", "normalize " + std::to_string(rows) + " x " + std::to_string(cols) +
                                 " (" + about + ")");
  perf.work({.ops = 6.0 * double(n), .bytes = 8.0 * double(n)});
  // Lowest first, and from the launches normalize made (observed by the harness, see
  // workbook/cuda/launches.hpp), so that a hint never speaks of a shape the kernel does not have.
  // One thread per row is told by the launch itself (threads < 2 * rows), at any size (at
  // 1024 x 128 the reference itself is at 7% of the roof, launch latency, so the fraction alone
  // could not tell it). Then the unfused or uncoalesced kernels of step 1 (the three kernels:
  // 28-33%).
  const std::vector<cuda::Launch> launches = cuda::observe_launches(launch);
  std::size_t threads = 0;
  for (const cuda::Launch& l : launches)
    threads = std::max(threads, l.blocks() * l.threads_per_block());
  const std::string ran =
      launches.empty() ? std::string("")
                       : "Your normalize ran " +
                             (launches.size() == 1 ? "one kernel, " + launches[0].describe()
                                                   : std::to_string(launches.size()) +
                                                         " kernels per call, the widest " +
                                                         std::to_string(threads) + " threads") +
                             ". ";
  // The launch observed says whether the kernel has about one thread per row.
  const std::string one_thread_per_row =
      ran +
      "That is about one thread per row: the 32 threads of a warp read 32 different rows, cols * "
      "4 bytes apart, so every load touches 32 separate 32-byte sectors (uncoalesced), and rows "
      "threads are too few to keep memory busy. Give each row a block (or a warp) whose threads "
      "read consecutive columns, c = threadIdx.x; c += blockDim.x: a warp's load is then 128 "
      "contiguous bytes.";
  if (!launches.empty() && threads < 2 * rows) {
    perf.hint(0.15, "Very far below the bandwidth roof. " + one_thread_per_row);
    perf.hint(0.35, "Far below the bandwidth roof. " + one_thread_per_row);
  } else if (launches.size() > 1)
    perf.hint(0.35, "Far below the bandwidth roof. " + ran +
                        "Each kernel reads all of x again: fuse them, one block (or warp) per row "
                        "computing both statistics and normalizing.");
  else
    perf.hint(0.35, "Far below the bandwidth roof. " + ran +
                        "Check that neighbouring threads read neighbouring columns: a thread that "
                        "takes a contiguous chunk of the row (columns t * cols / threads onwards) "
                        "makes every warp load uncoalesced; step by blockDim.x instead.");
  perf.hint(0.7,
            "Fused, but x is still read two or three times (once per pass over the row), or the "
            "reductions wait on __syncthreads: keep the row in registers (float4 loads, each "
            "thread a few "
            "of them), reduce with warp shuffles, and write y from the registers.");
  perf.hint(
      0.9,
      "Close: give small rows a warp each (no __syncthreads at all), issue every load of a row "
      "before "
      "the first reduction, and check with `lab06_perf --ncu` that DRAM bytes are 8 per element.");
  // The driver's check of a timed call compares with the reference's output within the check's
  // bound, from the rows' exact statistics (computed here, once).
  const std::vector<lab06::oracle::Row> stats = lab06::oracle::rows_of(x, rows, cols, lab06::kEps);
  perf.measure(cuda::gpu_kernel(
      launch, [&] { y.poison(); },
      [&] { return lab06::oracle::check_normalize(x, rows, cols, lab06::kEps, y.fetch()); },
      cuda::output_of(y, lab06::oracle::tolerance(), [&](std::size_t i) {
        return lab06::oracle::error_bound(stats, x, cols, i);
      })));
}

void normalize_1024x128(workbook::perf::Case& p) {
  normalize_case(p, 1024, 128, "small: launch and latency bound");
}
void normalize_16384x1024(workbook::perf::Case& p) {
  normalize_case(p, 16384, 1024, "64 MiB in");
}
void normalize_65536x1024(workbook::perf::Case& p) {
  normalize_case(p, 65536, 1024, "256 MiB in");
}
void normalize_16384x4096(workbook::perf::Case& p) {
  normalize_case(p, 16384, 4096, "256 MiB in, wide rows");
}
WORKBOOK_PERF_CASE(normalize_1024x128);
WORKBOOK_PERF_CASE(normalize_16384x1024);
WORKBOOK_PERF_CASE(normalize_65536x1024);
WORKBOOK_PERF_CASE(normalize_16384x4096);

// For the bench only (no perf test): the sizes between, where the handout's table shows each
// version's step from latency bound to bandwidth bound.
void normalize_4096x256(workbook::perf::Case& p) {
  normalize_case(p, 4096, 256, "4 MiB in");
}
void normalize_8192x512(workbook::perf::Case& p) {
  normalize_case(p, 8192, 512, "16 MiB in");
}
WORKBOOK_BENCH_CASE(normalize_4096x256);
WORKBOOK_BENCH_CASE(normalize_8192x512);

}  // namespace
