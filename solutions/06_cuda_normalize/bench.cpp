// Lab 06 bench: every version of normalize against the GPU's measured ceilings, interleaved, each
// run timed with CUDA events after an L2 flush; a copy of the same bytes for scale. Run:
// cmake --workflow --preset bench (on a GPU).
#include "normalize.hpp"
#include "versions.hpp"

#include <workbook/cuda/ceilings.hpp>
#include <workbook/cuda/memory.hpp>
#include <workbook/cuda/perf.hpp>
#include <workbook/tensor.hpp>

namespace {

namespace cuda = workbook::cuda;
namespace v = lab06::versions;
using workbook::Bench;
using cuda::bench_version;

void shape(Bench& bench, std::size_t rows, std::size_t cols) {
  const std::size_t n = rows * cols;
  workbook::Rng rng(workbook::seed_for("lab06.bench"));
  const auto x = cuda::uniform_on_device(n, rng, -3.0, 5.0);
  cuda::DeviceBuffer<float> y(n);
  const float* in = x.data();
  float* out = y.data();
  const float eps = lab06::kEps;
  // 6 FLOP and 8 bytes per element: see tests/perf_cases.cpp.
  bench.compare("normalize " + std::to_string(rows) + " x " + std::to_string(cols), {.ops = 6.0 * n, .bytes = 8.0 * n},
                {bench_version("v1 three kernels (eager)", [=] { v::normalize_v1_three_kernels(in, out, rows, cols, eps); }),
                 bench_version("v2 fused, shared-memory tree", [=] { v::normalize_v2_fused_shared(in, out, rows, cols, eps); }),
                 bench_version("v3 fused, warp shuffles", [=] { v::normalize_v3_warp_shuffles(in, out, rows, cols, eps); }),
                 bench_version("v4 Welford, x read twice", [=] { v::normalize_v4_welford(in, out, rows, cols, eps); }),
                 bench_version("v5 row in registers", [=] { lab06::normalize(in, out, rows, cols, eps); }, Bench::kReference),
                 bench_version("copy of the same bytes", [=] { cuda::copy(in, out, n); })});
}

}  // namespace

int main(int argc, char** argv) {
  return cuda::bench_main("lab06", argc, argv, [](Bench& bench) {
    for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1024, 128}, {4096, 256}, {8192, 512}, {16384, 1024},
                              {65536, 1024}, {16384, 4096}})
      shape(bench, rows, cols);
  });
}
