#pragma once
// The float64 answers lab 05's kernels are checked against, and the tolerance they are checked
// with. Shared by the correctness tests and the perf cases.
#include <workbook/check.hpp>

#include <cstddef>
#include <span>

namespace lab05::oracle {

inline workbook::Where where(const char* function) {
  return {function, "labs/05_cuda_square/square.cu"};
}

/// x * x rounds once to float32 (the GPU's multiply is IEEE, correctly rounded; an overflow gives
/// +inf, which the check expects where the exact square exceeds FLT_MAX).
inline workbook::Tolerance tolerance() {
  return workbook::Tolerance::roundings(1);
}

/// y (n elements) against x[i]^2.
inline workbook::CheckResult check_square(std::span<const float> x,
                                          const workbook::GuardedBuffer<float>& y) {
  return workbook::check_elementwise(
      y, [x](std::size_t i) { return double(x[i]) * double(x[i]); },
      {.where = where("square"), .tolerance = tolerance(), .inputs = {workbook::column("x", x)}});
}

/// y (rows x cols, rows ld_y apart; the padding must still hold the poison) against the square of
/// x (rows ld_x apart).
inline workbook::CheckResult check_square_2d(std::span<const float> x, std::size_t ld_x,
                                             const workbook::GuardedBuffer<float>& y,
                                             std::size_t ld_y, std::size_t rows, std::size_t cols) {
  auto at = [=](std::size_t i) { return double(x[(i / cols) * ld_x + i % cols]); };
  return workbook::check_elementwise(y, [at](std::size_t i) { return at(i) * at(i); },
                                     {.where = where("square_2d"),
                                      .tolerance = tolerance(),
                                      .inputs = {{"x", at}},
                                      .shape = {.rows = rows, .cols = cols, .ld = ld_y}});
}

}  // namespace lab05::oracle
