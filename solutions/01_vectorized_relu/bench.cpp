// Lab 01 bench: the lab's perf cases (labs/01_vectorized_relu/tests/perf_cases.cpp: sizes, inputs,
// work models) timed with every numbered version of the kernel in its place, against this
// machine's measured ceilings. Run: cmake --workflow --preset bench (it prints this table and
// writes JSON and a plot), or `lab01_bench --markdown` for the handout's table.
#include "vector_ops.hpp"
#include "versions.hpp"

#include <workbook/bench.hpp>
#include <workbook/ceilings.hpp>

#include <array>
#include <span>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>

#if defined(LAB01_HAVE_OPENBLAS)
#include <cblas.h>
#endif

namespace v = lab01::versions;

namespace {

// What a user of xtensor writes instead of lab 01: an expression over views of the two arrays,
// which xtensor evaluates with xsimd (XTENSOR_USE_XSIMD), ordinary stores.
void relu_xtensor(std::span<const float> x, std::span<float> y) {
  const std::array<std::size_t, 1> shape = {x.size()};
  const auto in = xt::adapt(x.data(), x.size(), xt::no_ownership(), shape);
  auto out = xt::adapt(y.data(), y.size(), xt::no_ownership(), shape);
  xt::noalias(out) = xt::maximum(in, 0.0f);
}

}  // namespace

int main(int argc, char** argv) {
  workbook::LabBench bench("lab01");
  // ReLU: v1 -> v2 -> v3 -> the reference, and the probe's copy of the same bytes for scale (from
  // memory only: in L1 its streaming stores would be the wrong yardstick).
  bench.versions(
      lab01::relu, "v4 streaming stores",
      {{"v1 scalar", v::relu_v1_scalar},
       {"v2 auto-vectorized", v::relu_v2_autovectorized},
       {"v3 xsimd", v::relu_v3_xsimd},
       {"copy (the probe's kernel)", workbook::copy_streaming, workbook::kBaseline, {"relu"}},
       {.label = "xtensor: xt::maximum(x, 0.0f)", .function = relu_xtensor, .library = true}});
  // The dot product in L1: one accumulator waits on the FMA latency; more than the load ports can
  // feed buy nothing. From memory, the reference alone (every version there waits on memory).
  bench.versions(lab01::dot, "v4 4 accumulators", {
    {"v1 scalar", v::dot_v1_scalar, true, {"dot"}},
        {"v2 1 accumulator", v::dot_v2_one_accumulator, true, {"dot"}},
        {"v3 2 accumulators", v::dot_v3_two_accumulators, true, {"dot"}},
        {"v5 8 accumulators", v::dot_v5_eight_accumulators, true, {"dot"}},
#if defined(LAB01_HAVE_OPENBLAS)
    {
      .label = "OpenBLAS cblas_sdot, 1 thread",
      .function =
          [](std::span<const float> a, std::span<const float> b) {
            return cblas_sdot(static_cast<int>(a.size()), a.data(), 1, b.data(), 1);
          },
      .library = true
    }
#endif
  });
  return bench.main(argc, argv);
}
