// Every numbered version of normalize against the oracle (the bench times them, so they must be
// right), and the sum-of-squares formula failing where the issue says it does.
#include "versions.hpp"
#include "normalize_oracle.hpp"

#include <workbook/cuda/memory.hpp>
#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <gmock/gmock.h>

namespace {

namespace v = lab06::versions;
using Version = void (*)(const float*, float*, std::size_t, std::size_t, float);

workbook::CheckResult run(Version normalize, const workbook::Vector& x, std::size_t rows,
                          std::size_t cols) {
  const auto dx = workbook::cuda::to_device<float>(workbook::as_span(x));
  workbook::cuda::DeviceOutput<float> y(rows * cols);
  normalize(dx.data(), y.data(), rows, cols, 1e-5f);
  return lab06::oracle::check_normalize(workbook::as_span(x), rows, cols, 1e-5, y.fetch());
}

TEST(Versions, EveryNormalizeVersionMatchesTheOracle) {
  auto rng = workbook::testing::rng();
  const std::pair<const char*, Version> versions[] = {{"v1", v::normalize_v1_three_kernels},
                                                      {"v2", v::normalize_v2_fused_shared},
                                                      {"v3", v::normalize_v3_warp_shuffles},
                                                      {"v4", v::normalize_v4_welford},
                                                      {"v5", v::normalize_v5_registers}};
  for (auto [name, normalize] : versions)
    for (std::size_t cols : {1, 3, 33, 128, 1000, 1024, 4096, 8192, 20000}) {
      const workbook::Vector x = workbook::normal(7 * cols, rng, 1.0, 3.0);
      ASSERT_CORRECT(run(normalize, x, 7, cols)) << name << ", 7 x " << cols;
    }
}

TEST(Versions, StableFormulasSurviveALargeOffsetAndTheSumOfSquaresDoesNot) {
  // 1e4 + N(0, 1): mean(x^2) and mean(x)^2 are both near 1e8, where floats are 8 apart, so their
  // difference (the variance, 1) comes out as a multiple of 8, or negative.
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::normal(64 * 128, rng, 1e4, 1.0);
  EXPECT_CORRECT(run(v::normalize_v4_welford, x, 64, 128));
  EXPECT_CORRECT(run(v::normalize_v5_registers, x, 64, 128));
  const workbook::CheckResult naive = run(v::normalize_sum_of_squares, x, 64, 128);
  EXPECT_FALSE(naive.ok) << "the sum-of-squares formula passed a test designed to defeat it";
  EXPECT_GT(naive.wrong, 64u * 128 / 4) << naive.report();
}

}  // namespace
