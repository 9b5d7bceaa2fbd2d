#pragma once
// What an invalid memory access means in lab 06's normalize: the harness re-runs a test whose
// kernel faulted under compute-sanitizer and explains the access (workbook/cuda/memcheck.hpp);
// this adds the lab's reading of it. Registered by normalize_test.cpp.
#include <workbook/cuda/memcheck.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lab06::faults {

inline std::string meaning(const workbook::cuda::MemoryFault& f,
                           const std::vector<workbook::cuda::MemoryFault>& same,
                           const std::optional<workbook::cuda::Launch>& launch) {
  using Kind = workbook::cuda::MemoryFault::Kind;
  (void)same, (void)launch;
  if (f.kind == Kind::misaligned && f.space == "global")
    return "In normalize, row r starts at x + r * cols: it is 16-byte aligned only when x is and "
           "cols % 4 == 0, and the tests pass rows of 5, 33 or 1023 floats and x shifted by 1 to "
           "3 floats. Test the row's address before the float4 path "
           "(reinterpret_cast<std::uintptr_t>(row) % 16 == 0, for x and y) and take the scalar "
           "loop otherwise.";
  if (f.kind == Kind::out_of_bounds && f.space == "global")
    return "In normalize every access needs c < cols within its row and row < rows: a grid "
           "rounded up, or a float4 step that runs past the row's last whole float4, reaches "
           "past the matrix.";
  return "";
}

}  // namespace lab06::faults
