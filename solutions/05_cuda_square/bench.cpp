// Lab 05 bench: the lab's perf cases (labs/05_cuda_square/tests/perf_cases.cpp: shapes, inputs,
// work model) timed with every version of square in its place, interleaved, each run timed with
// CUDA events after an L2 flush, against the GPU's measured ceilings. Run: cmake --workflow
// --preset bench (on a GPU), or `lab05_bench --markdown` for the handout's table.
#include "square.hpp"
#include "versions.hpp"

#include <workbook/cuda/ceilings.hpp>
#include <workbook/cuda/check.hpp>
#include <workbook/cuda/perf.hpp>

#include <cstddef>

namespace {

namespace cuda = workbook::cuda;
namespace v = lab05::versions;

// The seed's kernel covers a matrix with 16 x 16 blocks, and square() is given only n: the seed
// gets the n floats as rows of the widest divisor of n up to 16384 (rows of 12500 for 10000 x
// 10000, of 16384 for 4096 x 4096, of 1823 for 1823 x 781). Its blocks cover any rows several
// blocks wide as they would the case's own: half of each warp's loads in another row.
void seed_kernel(const float* x, float* y, std::size_t n) {
  std::size_t cols = 1;
  for (std::size_t c = 16384; c > 1; --c)
    if (n % c == 0) {
      cols = c;
      break;
    }
  v::square_v1_seed_16x16(x, y, n / cols, cols);
}

}  // namespace

int main(int argc, char** argv) {
  workbook::LabBench bench("lab05");
  bench.versions(
      lab05::square, "v5 float4 covering grid",
      {{"v1 seed, 16 x 16 blocks", seed_kernel},
       {"v2 1-D, one per thread", v::square_v2_one_per_thread},
       {"v3 grid-stride", v::square_v3_grid_stride},
       {"v4 float4 grid-stride",
        [](const float* x, float* y, std::size_t n) {
          v::square_v4_float4_grid_stride(x, y, n, 1);
        }},
       {"copy kernel (the probe's)", cuda::copy, workbook::kBaseline},
       {"cudaMemcpy device to device",
        [](const float* x, float* y, std::size_t n) {
          WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice));
        },
        workbook::kBaseline},
       // The knobs of v4 and v5, either way.
       {"v4 with 4 float4 in flight",
        [](const float* x, float* y, std::size_t n) {
          v::square_v4_float4_grid_stride(x, y, n, 4);
        }},
       {"v5 with 1 float4 per thread",
        [](const float* x, float* y, std::size_t n) { v::square_v5_covering_grid(x, y, n, 1); }},
       {"v5 with 4 float4 per thread",
        [](const float* x, float* y, std::size_t n) { v::square_v5_covering_grid(x, y, n, 4); }},
       {.label = "Thrust: thrust::transform, par_nosync",
        .function = v::square_thrust,
        .library = true}});
  return cuda::bench_main(bench, argc, argv);
}
