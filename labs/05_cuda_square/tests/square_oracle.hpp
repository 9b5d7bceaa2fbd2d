#pragma once
// The float64 answers lab 05's kernels are checked against, and the tolerance they are checked
// with. Shared by the correctness tests and the perf cases. A failing check names the mistake from
// square_mistakes.hpp that the output matches, else a pattern in CUDA's terms (grid, blocks,
// threads).
#include "square_inference.hpp"
#include "square_mistakes.hpp"

#include <workbook/check.hpp>

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace lab05::oracle {

inline workbook::Where where(const char* function) {
  return {function, "labs/05_cuda_square/square.cu", workbook::Model::cuda};
}

/// x * x rounds once to float32 (the GPU's multiply is IEEE, correctly rounded; an overflow gives
/// +inf, which the check expects where the exact square exceeds FLT_MAX).
inline workbook::Tolerance tolerance() {
  return workbook::Tolerance::roundings(1);
}

/// y (n elements) against x[i]^2. run_again (optional) poisons y, runs the kernel again on the same
/// inputs and fetches y: a failing output that changes between the two runs is called a race.
inline workbook::CheckResult check_square(std::span<const float> x,
                                          const workbook::GuardedBuffer<float>& y,
                                          std::function<void()> run_again = {}) {
  return workbook::check_elementwise(y, [x](std::size_t i) { return double(x[i]) * double(x[i]); },
                                     {.where = where("square"),
                                      .tolerance = tolerance(),
                                      .inputs = {workbook::column("x", x)},
                                      .mistakes =
                                          [x, &y] {
                                            // Last: the observation by threads and blocks.
                                            std::vector<workbook::Mistake> list =
                                                mistakes::square(x);
                                            for (workbook::Mistake& m : inference::by_launch(x, y))
                                              list.push_back(std::move(m));
                                            return list;
                                          },
                                      .run_again = std::move(run_again)});
}

/// y (rows x cols, rows ld_y apart; the padding must still hold the poison) against the square of
/// x (rows ld_x apart). run_again as for check_square.
inline workbook::CheckResult check_square_2d(std::span<const float> x, std::size_t ld_x,
                                             const workbook::GuardedBuffer<float>& y,
                                             std::size_t ld_y, std::size_t rows, std::size_t cols,
                                             std::function<void()> run_again = {}) {
  auto at = [=](std::size_t i) { return double(x[(i / cols) * ld_x + i % cols]); };
  return workbook::check_elementwise(
      y, [at](std::size_t i) { return at(i) * at(i); },
      {.where = where("square_2d"),
       .tolerance = tolerance(),
       .inputs = {{"x", at}},
       .shape = {.rows = rows, .cols = cols, .ld = ld_y},
       .mistakes = [=] { return mistakes::square_2d(x, ld_x, ld_y, rows, cols); },
       .run_again = std::move(run_again)});
}

/// x after a call (`after`, fetched from the device) against the values it held before: square
/// takes x as const, but a kernel can still write it (an in-place kernel handed x, or x and y
/// swapped in the launch), and then y is left unwritten.
inline workbook::CheckResult check_x_unchanged(const char* function, std::span<const float> before,
                                               std::span<const float> after) {
  return workbook::check_unchanged(before, after, where(function), "x");
}

}  // namespace lab05::oracle
