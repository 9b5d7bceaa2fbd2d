#pragma once
/// \file quantize_checks.hpp
/// \brief The argument checks of lab 04, shared by your quantize.cpp and the reference: each
/// throws std::invalid_argument with a message that names the function and what is wrong. The stub
/// already calls them; keep those calls.

#include "quantize.hpp"

#include <workbook/require.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lab04::checks {

/// A scale must be a positive, finite float: x / scale must mean something for every x.
inline void require_scale(std::string_view function, float scale, std::string_view name = "scale") {
  if (scale > 0 && std::isfinite(scale)) return;
  throw std::invalid_argument(std::string(function) + ": " + std::string(name) + " is " +
                              std::to_string(scale) +
                              ", but a scale must be a positive finite number");
}

/// A matrix of rows x cols elements held in a span of `size` elements.
inline void require_matrix(std::string_view function, std::size_t size, std::string_view name,
                           std::size_t rows, std::size_t cols) {
  if (size == rows * cols) return;
  throw std::invalid_argument(std::string(function) + ": " + std::string(name) + " has " +
                              std::to_string(size) + " elements, but a " + std::to_string(rows) +
                              " x " + std::to_string(cols) + " matrix needs " +
                              std::to_string(rows * cols));
}

/// The shapes of quantize_rows: x holds whole rows of `cols` values (cols > 0 unless x is empty),
/// with one scale per row and one byte per value. Returns the number of rows.
inline std::size_t require_rows(std::string_view function, std::size_t x_size, std::size_t cols,
                                std::size_t scales_size, std::size_t q_size) {
  const std::size_t rows = cols == 0 ? 0 : x_size / cols;
  require_matrix(function, x_size, "x", rows, cols);
  workbook::require_same_size(function, scales_size, "scales", rows, "the number of rows");
  workbook::require_same_size(function, q_size, "q", x_size, "x");
  return rows;
}

/// Quantized values lie in the symmetric range [-127, 127]: -128 means the tensor did not come from
/// quantize (a wrapped cast, or an unwritten output). The range is what makes the int32 sums of
/// matmul_int8 safe up to kMaxDepth, and the AVX2 instruction sequence exact (see the handout).
inline void require_symmetric(std::string_view function, std::span<const std::int8_t> values,
                              std::string_view name) {
  // A min-reduction, which the compiler vectorises; the position is looked up only on failure.
  std::int8_t lowest = 0;
  for (const std::int8_t v : values) lowest = std::min(lowest, v);
  if (lowest > -kQuantMax - 1) return;
  const auto at =
      std::find(values.begin(), values.end(), std::int8_t{-kQuantMax - 1}) - values.begin();
  throw std::invalid_argument(std::string(function) + ": " + std::string(name) + "[" +
                              std::to_string(at) +
                              "] is -128, outside the symmetric range [-127, 127] "
                              "that quantize produces");
}

/// A depth beyond kMaxDepth could overflow the int32 sums.
inline void require_depth(std::string_view function, std::size_t depth) {
  if (depth <= kMaxDepth) return;
  throw std::invalid_argument(std::string(function) + ": a depth of " + std::to_string(depth) +
                              " could overflow int32 (127 * 127 * depth > 2^31 - 1); at most " +
                              std::to_string(kMaxDepth) + " is exact");
}

/// The shapes and depth of matmul_int8's operands: require_int8_product without the range.
inline void require_int8_shapes(std::string_view function, std::span<const std::int8_t> a,
                                std::span<const std::int8_t> b, std::size_t c_size, std::size_t m,
                                std::size_t n, std::size_t depth) {
  require_depth(function, depth);
  require_matrix(function, a.size(), "a", m, depth);
  require_matrix(function, b.size(), "b", n, depth);
  require_matrix(function, c_size, "c", m, n);
}

/// The operands of matmul_int8: shapes, depth and range.
inline void require_int8_product(std::string_view function, std::span<const std::int8_t> a,
                                 std::span<const std::int8_t> b, std::size_t c_size, std::size_t m,
                                 std::size_t n, std::size_t depth) {
  require_int8_shapes(function, a, b, c_size, m, n, depth);
  require_symmetric(function, a, "a");
  require_symmetric(function, b, "b");
}

/// A QuantizedMatrix: values for rows x cols, one scale or one per row, each positive and finite.
inline void require_quantized(std::string_view function, const QuantizedMatrix& x,
                              std::string_view name) {
  require_matrix(function, x.values.size(), std::string(name) + ".values", x.rows, x.cols);
  if (x.scales.size() != 1 && x.scales.size() != x.rows)
    throw std::invalid_argument(std::string(function) + ": " + std::string(name) + ".scales has " +
                                std::to_string(x.scales.size()) +
                                " elements: give 1 (per tensor) or " + std::to_string(x.rows) +
                                " (one per row)");
  for (std::size_t r = 0; r < x.scales.size(); ++r)
    require_scale(function, x.scales[r], std::string(name) + ".scales[" + std::to_string(r) + "]");
}

}  // namespace lab04::checks
