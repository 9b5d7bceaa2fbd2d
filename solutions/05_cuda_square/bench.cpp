// Lab 05 bench: every version of square against the GPU's measured ceilings, interleaved, each
// run timed with CUDA events after an L2 flush. Run: cmake --workflow --preset bench (on a GPU).
#include "square.hpp"
#include "versions.hpp"

#include <workbook/cuda/ceilings.hpp>
#include <workbook/cuda/memory.hpp>
#include <workbook/cuda/perf.hpp>
#include <workbook/tensor.hpp>

namespace {

namespace cuda = workbook::cuda;
namespace v = lab05::versions;
using workbook::Bench;
using cuda::bench_version;

void shape(Bench& bench, std::size_t rows, std::size_t cols) {
  const std::size_t n = rows * cols;
  workbook::Rng rng(workbook::seed_for("lab05.bench"));
  const auto x = cuda::uniform_on_device(n, rng, -2.0, 2.0);
  cuda::DeviceBuffer<float> y(n);
  const float* in = x.data();
  float* out = y.data();
  std::vector<Bench::Version> versions = {
      bench_version("v1 seed, 16 x 16 blocks", [=] { v::square_v1_seed_16x16(in, out, rows, cols); }),
      bench_version("v2 1-D, one per thread", [=] { v::square_v2_one_per_thread(in, out, n); }),
      bench_version("v3 grid-stride", [=] { v::square_v3_grid_stride(in, out, n); }),
      bench_version("v4 float4 grid-stride", [=] { v::square_v4_float4_grid_stride(in, out, n, 1); }),
      bench_version("v5 float4 covering grid", [=] { lab05::square(in, out, n); }, Bench::kReference),
      bench_version("copy kernel (the probe's)", [=] { cuda::copy(in, out, n); }),
      bench_version("cudaMemcpy device to device", [=] {
        WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(out, in, n * sizeof(float), cudaMemcpyDeviceToDevice));
      }),
      // The knobs of v4 and v5, either way.
      bench_version("v4 with 4 float4 in flight", [=] { v::square_v4_float4_grid_stride(in, out, n, 4); }),
      bench_version("v5 with 1 float4 per thread", [=] { v::square_v5_covering_grid(in, out, n, 1); }),
      bench_version("v5 with 4 float4 per thread", [=] { v::square_v5_covering_grid(in, out, n, 4); }),
  };
  bench.compare("square " + std::to_string(rows) + " x " + std::to_string(cols), {.ops = double(n), .bytes = 8.0 * n},
                versions);
}

}  // namespace

int main(int argc, char** argv) {
  return cuda::bench_main("lab05", argc, argv, [](Bench& bench) {
    shape(bench, 10000, 10000);
    shape(bench, 4096, 4096);
    shape(bench, 1823, 781);
  });
}
