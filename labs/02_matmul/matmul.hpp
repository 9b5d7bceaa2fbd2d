#pragma once
/// \file matmul.hpp
/// \brief Lab 02: cache-blocked matrix multiplication, the interface you implement in matmul.cpp.
/// Read README.md (the handout) first.
///
/// Matrices are float32, row-major, and each has a leading dimension: the distance, in elements,
/// between the starts of two consecutive rows. Element (i, j) of A is a[i * lda + j]. A leading
/// dimension larger than the number of columns lets a kernel work on a block of a larger matrix;
/// the elements between the end of one row and the start of the next (the padding) are never read
/// (A, B) or written (C).

#include <workbook/require.hpp>

#include <cstddef>
#include <span>

namespace lab02 {

/// The sizes of C = A * B, with A m x k, B k x n and C m x n, and the three leading dimensions.
struct MatmulShape {
  std::size_t m = 0;    ///< rows of A and of C
  std::size_t n = 0;    ///< columns of B and of C
  std::size_t k = 0;    ///< columns of A and rows of B: each element of C sums k products
  std::size_t lda = 0;  ///< distance between rows of A, at least k
  std::size_t ldb = 0;  ///< distance between rows of B, at least n
  std::size_t ldc = 0;  ///< distance between rows of C, at least n

  /// Matrices without padding between rows: lda = k, ldb = n, ldc = n.
  static constexpr MatmulShape packed(std::size_t m, std::size_t n, std::size_t k) {
    return {.m = m, .n = n, .k = k, .lda = k, .ldb = n, .ldc = n};
  }
};

/// C = A * B: c[i * ldc + j] = sum over p < k of a[i * lda + p] * b[p * ldb + j], for every i < m
/// and j < n, accumulated in float32 in any order (the tests allow the rounding error of any one).
///
/// - C is overwritten, as sgemm with beta = 0 does: what it held before the call does not matter
///   and must not leak into the result. With k = 0 every element of C is 0 (an empty sum).
/// - Any sizes, including 1, primes and sizes that are not multiples of any block size; m = 0 or
///   n = 0 is a product with nothing to write.
/// - NaN and infinity propagate as IEEE arithmetic says (a NaN in row i of A makes row i of C NaN).
/// - Throws std::invalid_argument, before touching C, when a leading dimension is smaller than its
///   row, when a span is too short for its matrix ((rows - 1) * ld + cols elements), or when C
///   shares memory with A or B: the product cannot be computed in place. A and B may overlap (both
///   are only read): A * A is allowed.
void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape);

/// The argument checks matmul promises, in one place: the stub calls it already, keep that line.
inline void require_valid_arguments(std::span<const float> a, std::span<const float> b,
                                    std::span<const float> c, const MatmulShape& s) {
  workbook::require_matrix("matmul", "A", a.size(), s.m, s.k, s.lda, "lda");
  workbook::require_matrix("matmul", "B", b.size(), s.k, s.n, s.ldb, "ldb");
  workbook::require_matrix("matmul", "C", c.size(), s.m, s.n, s.ldc, "ldc");
  workbook::require_disjoint("matmul", c.data(), c.size_bytes(), "C", a.data(), a.size_bytes(),
                             "A");
  workbook::require_disjoint("matmul", c.data(), c.size_bytes(), "C", b.data(), b.size_bytes(),
                             "B");
}

}  // namespace lab02
