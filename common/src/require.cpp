#include <workbook/require.hpp>

#include <cstdint>
#include <limits>

namespace workbook {

void require_same_size(std::string_view function, std::size_t a_size, std::string_view a_name,
                       std::size_t b_size, std::string_view b_name) {
  if (a_size == b_size) return;
  throw std::invalid_argument(std::string(function) + ": " + std::string(a_name) + " has " +
                              std::to_string(a_size) + " elements but " + std::string(b_name) +
                              " has " + std::to_string(b_size) + ": they must be the same size");
}

void require_no_partial_overlap(std::string_view function, const void* a, std::size_t a_bytes,
                                std::string_view a_name, const void* b, std::size_t b_bytes,
                                std::string_view b_name) {
  const auto a0 = reinterpret_cast<std::uintptr_t>(a), b0 = reinterpret_cast<std::uintptr_t>(b);
  const bool overlap = a_bytes > 0 && b_bytes > 0 && a0 < b0 + b_bytes && b0 < a0 + a_bytes;
  if (!overlap || (a0 == b0 && a_bytes == b_bytes)) return;
  throw std::invalid_argument(std::string(function) + ": " + std::string(a_name) + " and " +
                              std::string(b_name) +
                              " overlap without being the same buffer; "
                              "pass the same span to work in place, or separate buffers");
}

void require_disjoint(std::string_view function, const void* a, std::size_t a_bytes,
                      std::string_view a_name, const void* b, std::size_t b_bytes,
                      std::string_view b_name) {
  const auto a0 = reinterpret_cast<std::uintptr_t>(a), b0 = reinterpret_cast<std::uintptr_t>(b);
  if (a_bytes == 0 || b_bytes == 0 || a0 >= b0 + b_bytes || b0 >= a0 + a_bytes) return;
  throw std::invalid_argument(
      std::string(function) + ": " + std::string(a_name) + " and " + std::string(b_name) +
      " share memory; the output must be a separate buffer, because the kernel still reads its "
      "inputs while it writes it");
}

void require_matrix(std::string_view function, std::string_view name, std::size_t size,
                    std::size_t rows, std::size_t cols, std::size_t ld, std::string_view ld_name) {
  const std::string shape =
      std::string(name) + " (" + std::to_string(rows) + " x " + std::to_string(cols) + ")";
  if (ld < cols)
    throw std::invalid_argument(
        std::string(function) + ": " + std::string(ld_name) + " is " + std::to_string(ld) +
        " but " + shape + " has " + std::to_string(cols) +
        " columns: the distance between the starts of two rows must be at least a row");
  if (rows == 0 || cols == 0) return;
  // (rows - 1) * ld + cols, unless it overflows: then no buffer is large enough.
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  const bool overflows = ld > 0 && rows - 1 > (max - cols) / ld;
  const std::size_t needed = overflows ? max : (rows - 1) * ld + cols;
  if (!overflows && size >= needed) return;
  throw std::invalid_argument(std::string(function) + ": " + shape + " with " +
                              std::string(ld_name) + " " + std::to_string(ld) + " needs " +
                              (overflows ? std::string("more elements than memory can hold")
                                         : "(" + std::to_string(rows) + " - 1) * " +
                                               std::to_string(ld) + " + " + std::to_string(cols) +
                                               " = " + std::to_string(needed) + " elements") +
                              ", but its span has " + std::to_string(size));
}

}  // namespace workbook
