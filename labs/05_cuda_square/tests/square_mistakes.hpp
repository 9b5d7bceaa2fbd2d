#pragma once
// Lab 05's catalogue of mistakes: what a first square kernel gets wrong, each with the wrong answer
// it gives and what to change. When a check of square_oracle.hpp fails, the output is compared with
// every entry (in this order, the most specific first) before any generic pattern, and the first
// that matches is named: "your output matches an index without the block, i = threadIdx.x: ...".
//
// The answers are exact (float64), like the oracle's; NaN marks an element the mistake leaves
// unwritten. A mistake that depends on the launch (the block size, the block shape) is listed once
// per usual choice, all under one name. An entry whose answer equals the right one at this size is
// left out: it could only "match" a kernel that is merely a rounding off.
#include <workbook/check.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <set>
#include <span>
#include <vector>

namespace lab05::mistakes {

/// The block sizes a first kernel launches with: every power of two from one warp to the limit.
inline constexpr std::size_t kBlockSizes[] = {32, 64, 128, 256, 512, 1024};

/// An element a mistake never writes.
inline constexpr double kUnwritten = std::numeric_limits<double>::quiet_NaN();

inline double squared(float v) {
  return double(v) * double(v);
}

/// The catalogue for square on the n = x.size() floats of x (a 2-D check of a contiguous matrix
/// uses it too).
inline std::vector<workbook::Mistake> square(std::span<const float> x) {
  const std::size_t n = x.size();
  std::vector<workbook::Mistake> list;
  auto blocks = [n](std::size_t threads) { return (n + threads - 1) / threads; };

  for (std::size_t threads : kBlockSizes) {
    if (threads >= n) break;             // one block of them covers n: nothing to see
    if (threads == n / 4 * 4) continue;  // the float4 entry's output: that one says both
    list.push_back(
        {"an index without the block, i = threadIdx.x",
         "every block squares the same first blockDim.x elements and the rest are never written "
         "(one block alone does the same). Each thread's element is i = blockIdx.x * blockDim.x + "
         "threadIdx.x.",
         [x, threads](std::size_t i) { return i < threads ? squared(x[i]) : kUnwritten; }});
  }

  // The tail cut at a multiple of 4 (a float4 loop alone) or of the block size (a grid rounded
  // down). Both cut the same elements when n % threads < 4: one entry says both.
  std::set<std::size_t> cuts;
  for (std::size_t step : {std::size_t{4}, std::size_t{32}, std::size_t{64}, std::size_t{128},
                           std::size_t{256}, std::size_t{512}, std::size_t{1024}}) {
    const std::size_t covered = n / step * step;
    if (covered == n || covered == 0 || !cuts.insert(covered).second) continue;
    auto answer = [x, covered](std::size_t i) { return i < covered ? squared(x[i]) : kUnwritten; };
    if (n - covered < 4)
      list.push_back(
          {"a float4 loop without its scalar tail (or a grid of n / threads blocks, rounded down)",
           "the last n % 4 elements are never written. With float4: after the n / 4 whole float4s, "
           "let a few threads square the last n % 4 floats one by one. With one float per thread: "
           "launch (n + threads - 1) / threads blocks, keep `if (i < n)`, and index with i = "
           "blockIdx.x * blockDim.x + threadIdx.x.",
           answer});
    else
      list.push_back({"a grid of n / threads blocks, rounded down",
                      "integer division rounds down (ceil(n / 256) too: the division is done "
                      "first), so the last n % threads elements get no thread. Launch (n + threads "
                      "- 1) / threads blocks and keep `if (i < n)` in the kernel.",
                      answer});
  }

  // After the tail cuts: where a swapped index leaves only a run of last elements (and a NaN input
  // among them squares to NaN, which an unwritten element also matches), the cut says it plainly.
  for (std::size_t threads : kBlockSizes) {
    // Thread t of block b squares t * threads + b: element i has a thread when some t <= i /
    // threads (and < threads) leaves a block number i - t * threads below the grid's size.
    const std::size_t grid = blocks(threads);
    auto written = [threads, grid](std::size_t i) {
      return i - std::min(i / threads, threads - 1) * threads < grid;
    };
    bool differs = false;
    for (std::size_t i = 0; i < n && !differs; ++i) differs = !written(i);
    if (!differs) continue;
    list.push_back(
        {"blockIdx.x and threadIdx.x swapped in the index, i = threadIdx.x * blockDim.x + "
         "blockIdx.x",
         "only the elements whose position in each group of blockDim.x is below the number of "
         "blocks get a thread. Write i = blockIdx.x * blockDim.x + threadIdx.x: neighbouring "
         "threads then take neighbouring elements, which is also what makes the loads coalesce.",
         [x, written](std::size_t i) { return written(i) ? squared(x[i]) : kUnwritten; }});
  }

  list.push_back({"x * 2 (or x + x) instead of x * x",
                  "square multiplies each element by itself: y[i] = x[i] * x[i].",
                  [x](std::size_t i) { return 2 * double(x[i]); }});

  if (n >= 4) {
    // In place, the float4 kernel squares [0, n / 4 * 4) and then a scalar pass over everything
    // squares those elements again. The intermediate square is rounded to float, as on the GPU.
    const std::size_t body = n / 4 * 4;
    list.push_back(
        {"the float4 part squared twice (in place, a scalar pass over all of [0, n) after the "
         "float4 kernel)",
         "out of place that pass only rewrites the same values, but in place (y == x) it squares "
         "the squares. The scalar pass is for the tail only: start it at n / 4 * 4 (after the "
         "head, if you peel one off).",
         [x, body](std::size_t i) {
           if (i >= body) return squared(x[i]);
           const float once = x[i] * x[i];
           return double(once * once);
         }});
  }
  return list;
}

/// The catalogue for square_2d: rows x cols, x's rows ld_x floats apart (x holds (rows - 1) *
/// ld_x + cols floats), y's ld_y apart. Element i is row i / cols, column i % cols.
inline std::vector<workbook::Mistake> square_2d(std::span<const float> x, std::size_t ld_x,
                                                std::size_t ld_y, std::size_t rows,
                                                std::size_t cols) {
  std::vector<workbook::Mistake> list;
  if (rows == 0 || cols == 0) return list;
  auto row = [cols](std::size_t i) { return i / cols; };
  auto col = [cols](std::size_t i) { return i % cols; };

  if (rows > 1 && ld_x != ld_y && (rows - 1) * ld_y + cols <= x.size())
    list.push_back({"x's rows read ld_y apart (one leading dimension used for both matrices)",
                    "x and y have their own: read x[r * ld_x + c] and write y[r * ld_y + c].",
                    [=](std::size_t i) { return squared(x[row(i) * ld_y + col(i)]); }});

  if (rows > 1)
    list.push_back({"every row squaring row 0 of x (x's index lacks the row offset r * ld_x)",
                    "read x[r * ld_x + c], the element of the row this thread writes.",
                    [=](std::size_t i) { return squared(x[col(i)]); }});

  // row = blockIdx.x * blockDim.x + threadIdx.x and col from .y, on a grid sized the usual way
  // round (grid.x over the columns): rows past the columns' grid, and columns past the rows', are
  // never written.
  const std::size_t shapes[][2] = {{16, 16}, {32, 8}, {8, 32}, {32, 32}};
  for (const auto& block : shapes) {
    const std::size_t bx = block[0], by = block[1];
    const std::size_t rows_reached = std::min(rows, (cols + bx - 1) / bx * bx),
                      cols_reached = std::min(cols, (rows + by - 1) / by * by);
    if (rows_reached == rows && cols_reached == cols) continue;
    list.push_back(
        {"rows and columns swapped between the grid and the index (the row taken from blockIdx.x "
         "and threadIdx.x, on a grid whose x runs over the columns)",
         "x is the fast direction: col = blockIdx.x * blockDim.x + threadIdx.x, row from .y, with "
         "(cols + blockDim.x - 1) / blockDim.x blocks in x. Then a warp also reads one row's "
         "neighbouring floats (coalesced).",
         [=](std::size_t i) {
           return row(i) < rows_reached && col(i) < cols_reached
                      ? squared(x[row(i) * ld_x + col(i)])
                      : kUnwritten;
         }});
  }

  list.push_back({"x * 2 (or x + x) instead of x * x",
                  "square_2d multiplies each element by itself: y = x * x.",
                  [=](std::size_t i) { return 2 * double(x[row(i) * ld_x + col(i)]); }});

  // A contiguous matrix is one flat array (square on rows * cols floats): square's mistakes.
  if (ld_x == cols && ld_y == cols)
    for (workbook::Mistake& m : square(x.first(rows * cols))) list.push_back(std::move(m));
  return list;
}

}  // namespace lab05::mistakes
