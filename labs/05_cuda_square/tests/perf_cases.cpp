// Lab 05 performance spec: what each perf test times, the work the roofline counts, and advice.
// `ctest --preset lab05 -L perf` compares your square with the reference, interleaved, both timed
// with CUDA events and the L2 cache flushed before every run. Run
// `build/lab05/labs/05_cuda_square/lab05_perf` to time yours alone against the GPU's ceilings, and
// `lab05_perf --ncu square_10000x10000` to see Nsight Compute's view next to the harness's.
// Each case calls the function it times through perf.timed(...): here that is yours (or the
// reference's); the lab's bench times the handout's numbered versions in its place, on the same
// inputs, which is where the handout's table comes from.
#include "square.hpp"
#include "square_launch.hpp"
#include "square_oracle.hpp"

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

// The advice for a kernel far below the roof, from the launches it made (observed by the harness,
// see workbook/cuda/launches.hpp): it speaks only of the shape the kernel has. `n` elements;
// `strided_2d`: rows of a padded matrix, where the order of the indices decides coalescing.
std::string far_below(const std::vector<cuda::Launch>& launches, std::size_t n, bool strided_2d,
                      const std::string& case_name) {
  const std::string ncu = " (`lab05_perf --ncu " + case_name +
                          "` shows the DRAM bytes moved against the 8 per element counted)";
  if (launches.empty())
    return "Far below the bandwidth roof. Check that the 32 threads of a warp read 32 "
           "neighbouring floats (coalescing) and that each element is read and written once" +
           ncu + ".";
  const cuda::Launch& l = launches.back();
  std::string text = "Far below the bandwidth roof. Your kernel ran as " + l.describe() +
                     (launches.size() > 1 ? " (the last of " + std::to_string(launches.size()) +
                                                " launches per call)"
                                          : "") +
                     ". ";
  if (!l.one_dimensional()) {
    if (l.block[0] < 32)
      return text + "With blocks " + std::to_string(l.block[0]) + " threads wide, a warp spans " +
             std::to_string(32 / std::max(1u, l.block[0])) +
             " rows, so its loads fall in that many rows" +
             (strided_2d ? " (ld floats apart)" : "") +
             ": make blockDim.x at least 32, the column from threadIdx.x, so that a warp reads "
             "32 neighbouring floats of one row" +
             (strided_2d ? "." : ", or make the index 1-D: the matrix is contiguous.");
    return text +
           "The 32 threads of a warp must read 32 neighbouring floats of one row: the column "
           "from threadIdx.x (col = blockIdx.x * blockDim.x + threadIdx.x), the row from .y; "
           "with the row from threadIdx.x every load of a warp is a transaction of its own" +
           ncu + ".";
  }
  const std::size_t threads = l.blocks() * l.threads_per_block();
  if (threads < n)
    return text + "That is " + std::to_string(threads) + " threads for " + std::to_string(n) +
           " elements, so each thread loops over about " +
           std::to_string((n + threads - 1) / threads) +
           " of them, and that loop has two usual ways to go wrong. (1) Its step: it must be "
           "blockDim.x * gridDim.x (a grid-stride loop); a step of blockDim.x makes every block "
           "walk nearly the whole array, up to " +
           std::to_string(l.blocks()) +
           " times the loads and stores the work needs (the L2 cache serves most repeats, so "
           "DRAM bytes can look right while the time is not: count the elements one thread "
           "visits). (2) Its order: a thread that takes a contiguous chunk (elements t * " +
           std::to_string((n + threads - 1) / threads) +
           " onwards) puts the 32 loads of a warp that many floats apart, a 32-byte sector "
           "each instead of 4 sectors per warp; neighbouring threads must take neighbouring "
           "elements at every step (i = start; i < n; i += stride). `lab05_perf --ncu " +
           case_name + "` shows the sectors per request and the bytes moved.";
  return text +
         "One thread per element: neighbouring threads must take neighbouring elements (i = "
         "blockIdx.x * blockDim.x + threadIdx.x), or every load of a warp is a transaction of "
         "its own" +
         ncu + ".";
}

// Hints, from the furthest to the nearest: what usually stands between a square kernel and the
// copy roof. Thresholds are fractions of the roofline (the measured device copy bandwidth).
void hints(workbook::perf::Case& perf, const std::vector<cuda::Launch>& launches, std::size_t n,
           bool strided_2d = false) {
  perf.hint(0.5, far_below(launches, n, strided_2d, perf.name()));
  perf.hint(0.85,
            "Coalesced, but each thread moves 4 bytes at a time and the GPU has too few loads in "
            "flight to cover memory's latency. Load float4 (16 bytes per thread), and let each "
            "thread handle several of them in a grid-stride loop.");
  perf.hint(0.97,
            "Close. Issue several independent float4 loads before the first store (unroll the "
            "grid-stride loop by 2 to 4), size the grid to a whole number of waves (a multiple "
            "of the number of SMs), and check with `lab05_perf --ncu` that DRAM bytes match the "
            "8 bytes per element counted.");
}

// Squares a rows x cols matrix stored contiguously: n = rows * cols floats, 4 bytes read and 4
// written per element, one multiply.
void square_matrix(workbook::perf::Case& perf, std::size_t rows, std::size_t cols,
                   const std::string& about) {
  cuda::require_device();
  const std::size_t n = rows * cols;
  workbook::AlignedVector<float> x(n);
  workbook::fill_uniform(x, perf.rng(), -2.0, 2.0);
  const auto dx = cuda::to_device<float>(x);
  cuda::DeviceOutput<float> y(n);
  const auto square = perf.timed(lab05::square);
  auto launch = [&] { square(dx.data(), y.data(), n); };
  const std::vector<cuda::Launch> launches = cuda::observe_launches(launch);
  perf.describe("square", "square of " + std::to_string(rows) + " x " + std::to_string(cols) +
                              " floats (" + about + ")");
  perf.work({.ops = double(n), .bytes = 8.0 * double(n)});
  hints(perf, launches, n);
  perf.measure(cuda::gpu_kernel(
      launch, [&] { y.poison(); }, [&] { return lab05::oracle::check_square(x, y.fetch()); },
      cuda::output_of(y, lab05::oracle::tolerance())));
}

// 800 MB moved per call: the bandwidth of device memory, the 97% target.
void square_10000x10000(workbook::perf::Case& perf) {
  square_matrix(perf, 10000, 10000, "400 MB in, 400 MB out");
}
// 128 MB per call: a few dozen microseconds, where launch and tail effects start to count.
void square_4096x4096(workbook::perf::Case& perf) {
  square_matrix(perf, 4096, 4096, "64 MiB in, 64 MiB out");
}
// 11 MB per call, an odd size: a single wave of blocks, a few microseconds; the tails matter.
void square_1823x781(workbook::perf::Case& perf) {
  square_matrix(perf, 1823, 781, "an odd shape, 5.7 MB in");
}
WORKBOOK_PERF_CASE(square_10000x10000);
WORKBOOK_PERF_CASE(square_4096x4096);
WORKBOOK_PERF_CASE(square_1823x781);

// The 2-D version on rows padded to 4096 floats: only the first 4000 of each are squared.
void square_2d_strided(workbook::perf::Case& perf) {
  cuda::require_device();
  const std::size_t rows = 4096, cols = 4000, ld = 4096, size = (rows - 1) * ld + cols;
  workbook::AlignedVector<float> x(size);
  workbook::fill_uniform(x, perf.rng(), -2.0, 2.0);
  const auto dx = cuda::to_device<float>(x);
  cuda::DeviceOutput<float> y(size);
  const auto square_2d = perf.timed(lab05::square_2d);
  auto launch = [&] { square_2d(dx.data(), ld, y.data(), ld, rows, cols); };
  const std::vector<cuda::Launch> launches = cuda::observe_launches(launch);
  perf.describe("square_2d", "square_2d of 4096 x 4000 floats in rows of 4096");
  perf.work({.ops = double(rows * cols), .bytes = 8.0 * double(rows * cols)});
  hints(perf, launches, rows * cols, true);
  // The whole buffer, padding included: there both outputs still hold the poison.
  perf.measure(cuda::gpu_kernel(
      launch, [&] { y.poison(); },
      [&] { return lab05::oracle::check_square_2d(x, ld, y.fetch(), ld, rows, cols); },
      cuda::output_of(y, lab05::oracle::tolerance())));
}
WORKBOOK_PERF_CASE(square_2d_strided);

}  // namespace
