#pragma once
/// \file require.hpp
/// \brief Argument checks for lab interfaces: wrong sizes or overlapping buffers become a clear
/// std::invalid_argument instead of a silent out-of-bounds access.

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace workbook {

/// Throws std::invalid_argument("<function>: <a> has N elements but <b> has M: they must be the
/// same size").
void require_same_size(std::string_view function, std::size_t a_size, std::string_view a_name,
                       std::size_t b_size, std::string_view b_name);

/// Throws std::invalid_argument when two buffers overlap without being the same buffer: an
/// elementwise kernel may work in place (out == in) but not on shifted views of one array.
void require_no_partial_overlap(std::string_view function, const void* a, std::size_t a_bytes,
                                std::string_view a_name, const void* b, std::size_t b_bytes,
                                std::string_view b_name);

/// Throws std::invalid_argument when two buffers share any byte. For the output and an input of a
/// kernel that reads the input again after it has started writing the output (a matrix product
/// reads each row of A for every block of columns of C): there even the very same buffer is wrong.
void require_disjoint(std::string_view function, const void* a, std::size_t a_bytes,
                      std::string_view a_name, const void* b, std::size_t b_bytes,
                      std::string_view b_name);

/// Throws std::invalid_argument unless a row-major rows x cols matrix whose rows start `ld`
/// elements apart (its leading dimension, named `ld_name` in messages) is laid out sensibly and
/// fits in a buffer of `size` elements: ld >= cols, and size >= (rows - 1) * ld + cols (the last
/// row needs no padding after it). A matrix with no rows or no columns needs no elements.
void require_matrix(std::string_view function, std::string_view name, std::size_t size,
                    std::size_t rows, std::size_t cols, std::size_t ld, std::string_view ld_name);

/// The two checks an elementwise kernel needs, for spans: same size, in place or disjoint.
template <class In, class Out>
void require_elementwise(std::string_view function, std::span<In> in, std::string_view in_name,
                         std::span<Out> out, std::string_view out_name) {
  require_same_size(function, in.size(), in_name, out.size(), out_name);
  require_no_partial_overlap(function, in.data(), in.size_bytes(), in_name, out.data(),
                             out.size_bytes(), out_name);
}

}  // namespace workbook
