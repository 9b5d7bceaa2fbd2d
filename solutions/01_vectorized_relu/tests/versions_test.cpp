// Every numbered version of lab 01 is correct, at every tail length: they differ only in speed.
#include "versions.hpp"
#include "vector_ops_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

namespace {

using workbook::as_span;

TEST(Versions, EveryReluVersionMatchesTheOracle) {
  auto rng = workbook::testing::rng();
  for (auto relu : {lab01::versions::relu_v1_scalar, lab01::versions::relu_v2_autovectorized,
                    lab01::versions::relu_v3_xsimd}) {
    for (std::size_t n : {0, 1, 15, 16, 17, 67, 1000}) {
      const workbook::Vector x = workbook::adversarial(n, rng);
      workbook::GuardedBuffer<float> y(n);
      relu(as_span(x), y.span());
      ASSERT_CORRECT(lab01::oracle::check_relu(as_span(x), y)) << "n = " << n;
    }
  }
}

TEST(Versions, EveryDotVersionMatchesTheOracle) {
  auto rng = workbook::testing::rng();
  for (auto dot :
       {lab01::versions::dot_v1_scalar, lab01::versions::dot_v2_one_accumulator,
        lab01::versions::dot_v3_two_accumulators, lab01::versions::dot_v5_eight_accumulators}) {
    for (std::size_t n = 0; n <= 150; ++n) {
      const workbook::Vector a = workbook::normal(n, rng), b = workbook::normal(n, rng);
      ASSERT_CORRECT(lab01::oracle::check_dot(as_span(a), as_span(b), dot(as_span(a), as_span(b))))
          << "n = " << n;
    }
  }
}

}  // namespace
