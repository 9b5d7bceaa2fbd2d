#pragma once
/// \file square.hpp
/// \brief Lab 05: CUDA square, and timing kernels right. The interface you implement in square.cu.
/// Read README.md (the handout) first.
///
/// Every array here is device memory (from cudaMalloc). Like a kernel launch, square and square_2d
/// are asynchronous: they enqueue work on the default stream and return before it is done. Bad
/// arguments throw std::invalid_argument (the stub already checks them for you); a failed launch
/// throws workbook::cuda::Error (use WORKBOOK_CUDA_CHECK_LAUNCH after each launch).

#include <workbook/require.hpp>

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

namespace lab05 {

/// Part A. y[i] = x[i] * x[i] for i < n.
///
/// x and y may start at any float address (a pointer into the middle of an array is fine), y may
/// be x itself (in place) but not a shifted view of it, and n may be 0 (then nothing happens).
/// NaN stays NaN, infinities and squares beyond FLT_MAX become +inf, as in torch.square.
void square(const float* x, float* y, std::size_t n);

/// Part A, 2-D: the rows x cols matrix at x, whose rows start ld_x floats apart, squared into the
/// matrix at y, whose rows start ld_y floats apart: y[r * ld_y + c] = x[r * ld_x + c]^2 for r <
/// rows, c < cols. The elements between cols and ld_y of each row of y are not yours: leave them
/// alone.
void square_2d(const float* x, std::size_t ld_x, float* y, std::size_t ld_y, std::size_t rows,
               std::size_t cols);

/// Part B. Times GPU work honestly. `launch` enqueues work on the default stream and returns at
/// once (as square does). Call it `warmup` times untimed, then `runs` times, each run timed on its
/// own by the GPU with a pair of CUDA events, and return the `runs` durations in milliseconds, in
/// the order they ran. When it returns, the timed work has finished.
std::vector<float> time_launches(const std::function<void()>& launch, int warmup, int runs);

// --- Argument checks, shared by the stub and the solution
// -----------------------------------------

/// square's arguments: device pointers present when n > 0, y in place or apart from x.
inline void check_square_arguments(const float* x, const float* y, std::size_t n) {
  if (n > 0 && (x == nullptr || y == nullptr))
    throw std::invalid_argument("square: x or y is null but n = " + std::to_string(n));
  workbook::require_no_partial_overlap("square", x, n * sizeof(float), "x", y, n * sizeof(float),
                                       "y");
}

/// square_2d's arguments: leading dimensions of at least cols, and the two matrices in place
/// (same address and ld) or apart.
inline void check_square_2d_arguments(const float* x, std::size_t ld_x, const float* y,
                                      std::size_t ld_y, std::size_t rows, std::size_t cols) {
  if (ld_x < cols || ld_y < cols)
    throw std::invalid_argument("square_2d: ld_x = " + std::to_string(ld_x) +
                                " and ld_y = " + std::to_string(ld_y) +
                                " must be at least cols = " + std::to_string(cols));
  if (rows == 0 || cols == 0) return;
  if (x == nullptr || y == nullptr) throw std::invalid_argument("square_2d: x or y is null");
  const std::size_t x_bytes = ((rows - 1) * ld_x + cols) * sizeof(float),
                    y_bytes = ((rows - 1) * ld_y + cols) * sizeof(float);
  if (x == y && ld_x != ld_y)
    throw std::invalid_argument("square_2d: in place (x == y) needs ld_x == ld_y");
  workbook::require_no_partial_overlap("square_2d", x, x_bytes, "x", y, y_bytes, "y");
}

/// time_launches's arguments.
inline void check_time_launches_arguments(const std::function<void()>& launch, int warmup,
                                          int runs) {
  if (!launch) throw std::invalid_argument("time_launches: launch is empty");
  if (warmup < 0 || runs < 1)
    throw std::invalid_argument("time_launches: warmup = " + std::to_string(warmup) +
                                " and runs = " + std::to_string(runs) +
                                ": need warmup >= 0 and runs >= 1");
}

}  // namespace lab05
