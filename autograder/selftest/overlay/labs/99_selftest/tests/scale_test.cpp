// Lab 99's tests.
#include "scale.hpp"
#include "scale_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <stdexcept>
#include <vector>

namespace {

TEST(Scale, MatchesOracle) {
  auto rng = workbook::testing::rng();
  for (std::size_t n : {0, 1, 7, 16, 33, 1000}) {
    const workbook::Vector x = workbook::normal(n, rng);
    workbook::GuardedBuffer<float> y(n);
    lab99::scale(workbook::as_span(x), 1.5f, y.span());
    ASSERT_CORRECT(lab99::oracle::check_scale(workbook::as_span(x), 1.5f, y)) << "n = " << n;
  }
}

TEST(Scale, RejectsMismatchedSizes) {
  std::vector<float> x(4), y(3);
  EXPECT_THROW(lab99::scale(x, 2.0f, y), std::invalid_argument);
}

}  // namespace
