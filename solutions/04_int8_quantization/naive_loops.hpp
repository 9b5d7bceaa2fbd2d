#pragma once
// The plainest correct loops, compiled twice: once with the auto-vectoriser off (v1, in
// versions_scalar.cpp) and once with it on (v2, in versions.cpp). Internal linkage, so that each
// translation unit keeps its own copy, compiled with its own flags.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

namespace lab04::versions {
namespace {

// c[i][j] = the dot product of row i of A and row j of B: both rows contiguous, an int32 sum.
inline void naive_product(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                          std::span<std::int32_t> c, std::size_t m, std::size_t n,
                          std::size_t depth) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;
      for (std::size_t k = 0; k < depth; ++k) sum += a[i * depth + k] * b[j * depth + k];
      c[i * n + j] = sum;
    }
}

}  // namespace
}  // namespace lab04::versions
