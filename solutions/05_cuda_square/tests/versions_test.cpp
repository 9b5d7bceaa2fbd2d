// Every numbered version of square against the oracle: the bench times them, so they must be right.
#include "versions.hpp"
#include "square_oracle.hpp"

#include <workbook/cuda/memory.hpp>
#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

namespace {

namespace v = lab05::versions;
using workbook::as_span;
using workbook::cuda::DeviceOutput;
using workbook::cuda::to_device;

template <class Square>
void expect_version(const char* name, Square square) {
  auto rng = workbook::testing::rng();
  for (std::size_t n : {1, 3, 4, 5, 67, 1000, 4099, (1 << 22) + 3})
    for (std::size_t shift : {0, 1, 2}) {  // x misaligned by shift, y by shift / 2: alike, or not
      const workbook::Vector x = workbook::normal(n, rng);
      const auto dx = to_device<float>(as_span(x), shift);
      DeviceOutput<float> y(n, shift / 2);
      square(dx.data() + shift, y.data(), n);
      ASSERT_CORRECT(lab05::oracle::check_square(as_span(x), y.fetch()))
          << name << ", n = " << n << ", shift " << shift;
    }
}

TEST(Versions, EverySquareVersionMatchesTheOracle) {
  expect_version("v1 seed (1 x n)", [](const float* x, float* y, std::size_t n) {
    v::square_v1_seed_16x16(x, y, 1, n);
  });
  expect_version("v2", v::square_v2_one_per_thread);
  expect_version("v3", v::square_v3_grid_stride);
  for (int in_flight : {1, 2, 4, 8})
    expect_version("v4", [=](const float* x, float* y, std::size_t n) {
      v::square_v4_float4_grid_stride(x, y, n, in_flight);
    });
  for (int per_thread : {1, 2, 4})
    for (int block : {128, 256})
      expect_version("v5", [=](const float* x, float* y, std::size_t n) {
        v::square_v5_covering_grid(x, y, n, per_thread, block);
      });
}

TEST(Versions, TheSeedKernelSquaresAMatrix) {
  auto rng = workbook::testing::rng();
  const std::size_t rows = 37, cols = 53;
  const workbook::Vector x = workbook::normal(rows * cols, rng);
  const auto dx = to_device<float>(as_span(x));
  DeviceOutput<float> y(rows * cols);
  v::square_v1_seed_16x16(dx.data(), y.data(), rows, cols);
  EXPECT_CORRECT(lab05::oracle::check_square(as_span(x), y.fetch()));
}

}  // namespace
