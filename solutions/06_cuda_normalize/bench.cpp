// Lab 06 bench: the lab's perf cases (labs/06_cuda_normalize/tests/perf_cases.cpp: shapes, inputs,
// work model) timed with every version of normalize in its place, interleaved, each run timed with
// CUDA events after an L2 flush, against the GPU's measured ceilings; a copy of the same bytes for
// scale. Run: cmake --workflow --preset bench (on a GPU), or `lab06_bench --markdown` for the
// handout's table.
#include "normalize.hpp"
#include "versions.hpp"

#include <workbook/cuda/ceilings.hpp>
#include <workbook/cuda/perf.hpp>

#include <cstddef>

namespace cuda = workbook::cuda;
namespace v = lab06::versions;

int main(int argc, char** argv) {
  workbook::LabBench bench("lab06");
  bench.versions(lab06::normalize, "v5 row in registers",
                 {{"v1 three kernels (eager)", v::normalize_v1_three_kernels},
                  {"v2 fused, shared-memory tree", v::normalize_v2_fused_shared},
                  {"v3 fused, warp shuffles", v::normalize_v3_warp_shuffles},
                  {"v4 Welford, x read twice", v::normalize_v4_welford},
                  {"copy of the same bytes",
                   [](const float* x, float* y, std::size_t rows, std::size_t cols, float) {
                     cuda::copy(x, y, rows * cols);
                   },
                   workbook::kBaseline}});
  return cuda::bench_main(bench, argc, argv);
}
