#pragma once
// Which elements of a wrong square output are wrong, said in terms of the launch that wrote it, as
// the harness observed it (a GPU test installs observed_launch from workbook/cuda/launches.hpp).
// With a 1-D grid of G blocks of B threads, element i belongs to thread i % B of block (i % GB) / B
// when the kernel indexes i = blockIdx.x * blockDim.x + threadIdx.x (and strides by G * B). When
// the wrong elements are exactly those of some threads of every block, or of some blocks, the last
// entry of the catalogue says which (an observation, not a cause): "the elements of threads 32-63
// (warp 1) of each block of 256 wrong, every other element right".
#include <workbook/buffer.hpp>
#include <workbook/check.hpp>

#include <cmath>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace lab05::inference {

/// A 1-D launch: blocks in the grid, threads per block.
struct Grid1d {
  std::size_t blocks = 0, threads = 0;
};

/// The 1-D launch that wrote the output being checked, when the harness observed one (unset, or
/// nullopt: unknown or not 1-D).
inline std::function<std::optional<Grid1d>()>& observed_launch() {
  static std::function<std::optional<Grid1d>()> observed;
  return observed;
}

/// "threads 32-63 (warp 1)", "blocks 3 and 7": the marked indices as ranges, with the warps they
/// make up when `warps` and the runs are whole warps.
inline std::string ranges(const std::vector<bool>& marked, const std::string& unit, bool warps) {
  std::vector<std::pair<std::size_t, std::size_t>> runs;  // [first, last]
  for (std::size_t k = 0; k < marked.size(); ++k)
    if (marked[k]) {
      if (!runs.empty() && runs.back().second + 1 == k)
        runs.back().second = k;
      else
        runs.push_back({k, k});
    }
  auto list = [&](const auto& name) {
    std::string s;
    for (std::size_t r = 0; r < runs.size(); ++r)
      s += (r == 0 ? "" : r + 1 == runs.size() ? " and " : ", ") + name(runs[r]);
    return s;
  };
  const bool single = runs.size() == 1 && runs[0].first == runs[0].second;
  std::string s = unit + (single ? " " : "s ") + list([](const auto& run) {
                    return run.first == run.second
                               ? std::to_string(run.first)
                               : std::to_string(run.first) + "-" + std::to_string(run.second);
                  });
  bool whole = warps;
  for (const auto& run : runs) whole = whole && run.first % 32 == 0 && (run.second + 1) % 32 == 0;
  if (whole) {
    std::size_t count = 0;
    for (const auto& run : runs) count += (run.second + 1 - run.first) / 32;
    s += " (warp" + std::string(count == 1 ? " " : "s ") + list([](const auto& run) {
           const std::size_t a = run.first / 32, b = run.second / 32;
           return a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b);
         }) +
         ")";
  }
  return s;
}

/// The entry for square's output y of x, when the wrong elements are exactly some threads' of
/// every block or some blocks' (and not all of them); none otherwise.
inline std::vector<workbook::Mistake> by_launch(std::span<const float> x,
                                                const workbook::GuardedBuffer<float>& y) {
  std::vector<workbook::Mistake> list;
  const std::optional<Grid1d> grid = observed_launch() ? observed_launch()() : std::nullopt;
  const std::size_t n = x.size();
  if (!grid || grid->blocks == 0 || grid->threads == 0 || n == 0) return list;
  const std::size_t threads = grid->threads, blocks = grid->blocks, all = threads * blocks;
  auto wrong = [&](std::size_t i) {
    if (y.is_poison(i)) return true;
    const float want = x[i] * x[i];  // one IEEE rounding, as on the GPU
    return !(y[i] == want || (std::isnan(y[i]) && std::isnan(want)));
  };
  // Per thread of a block and per block: 1 all right, 2 all wrong, 3 both (0 no element).
  std::vector<int> thread_state(threads, 0), block_state(blocks, 0);
  std::size_t wrong_count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool w = wrong(i);
    wrong_count += w;
    thread_state[i % threads] |= w ? 2 : 1;
    block_state[i % all / threads] |= w ? 2 : 1;
  }
  if (wrong_count == 0 || wrong_count == n) return list;
  auto pure = [](const std::vector<int>& states) {
    for (int s : states)
      if (s == 3) return false;
    return true;
  };
  std::vector<bool> marked;
  std::string whose;
  if (pure(thread_state) && !pure(block_state)) {
    for (int s : thread_state) marked.push_back(s == 2);
    whose = ranges(marked, "thread", true) + " of each block of " + std::to_string(threads);
  } else if (pure(block_state) && !pure(thread_state)) {
    for (int s : block_state) marked.push_back(s == 2);
    whose = ranges(marked, "block", false) + " of the " + std::to_string(blocks);
  } else {
    return list;
  }
  const std::string launch =
      "a grid of " + std::to_string(blocks) + " blocks of " + std::to_string(threads) + " threads";
  list.push_back(
      {"the elements of " + whose + " wrong, and every other element right",
       "that is with i = blockIdx.x * blockDim.x + threadIdx.x (strided by blockDim.x * "
       "gridDim.x) on the launch your square made, " +
           launch +
           ". Look at what your kernel does differently for those threads: a condition on "
           "threadIdx.x, blockIdx.x or the warp (threadIdx.x / 32), or a bound that stops them "
           "early.",
       [x, &y, wrong](std::size_t i) {
         if (!wrong(i)) return double(x[i]) * double(x[i]);
         return y.is_poison(i) ? std::nan("") : double(y[i]);
       }});
  return list;
}

}  // namespace lab05::inference
