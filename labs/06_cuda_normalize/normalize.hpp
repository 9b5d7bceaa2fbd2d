#pragma once
/// \file normalize.hpp
/// \brief Lab 06: per-row normalization on the GPU, the interface you implement in normalize.cu.
/// Read README.md (the handout) first.
///
/// Semantics, exactly those of PyTorch's torch.nn.functional.layer_norm(x, (cols,), eps=eps)
/// without weight and bias: every row of x becomes
///
///     y = (x - mean) / sqrt(var + eps),   mean = sum(x) / cols,   var = sum((x - mean)^2) / cols
///
/// (the population variance: divided by cols, not cols - 1). A constant row gives zeros; a row
/// holding a NaN gives NaN in that row only.

#include <workbook/require.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace lab06 {

/// PyTorch's default epsilon for layer_norm.
inline constexpr float kEps = 1e-5f;

/// Normalizes each row of the rows x cols matrix x (device memory, row-major, contiguous) into y
/// (the same shape; y may be x itself, in place, but not a shifted view of it). rows or cols may be
/// 0. Asynchronous, like a kernel launch: it enqueues work on the default stream and returns.
void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps = kEps);

/// normalize's arguments, checked by the stub and the solution alike.
inline void check_normalize_arguments(const float* x, const float* y, std::size_t rows,
                                      std::size_t cols, float eps) {
  if (!(eps > 0))
    throw std::invalid_argument("normalize: eps = " + std::to_string(eps) + " must be positive");
  const std::size_t bytes = rows * cols * sizeof(float);
  if (bytes > 0 && (x == nullptr || y == nullptr))
    throw std::invalid_argument("normalize: x or y is null");
  workbook::require_no_partial_overlap("normalize", x, bytes, "x", y, bytes, "y");
}

}  // namespace lab06
