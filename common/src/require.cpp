#include <workbook/require.hpp>

#include <cstdint>

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
                              std::string(b_name) + " overlap without being the same buffer; "
                              "pass the same span to work in place, or separate buffers");
}

}  // namespace workbook
