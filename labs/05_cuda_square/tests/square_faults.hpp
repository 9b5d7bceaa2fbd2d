#pragma once
// What an invalid memory access means in lab 05's square and square_2d: the harness re-runs a test
// whose kernel faulted under compute-sanitizer and explains the access
// (workbook/cuda/memcheck.hpp); this adds the lab's reading of it. Registered by square_test.cpp.
#include <workbook/cuda/memcheck.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lab05::faults {

inline std::string meaning(const workbook::cuda::MemoryFault& f,
                           const std::vector<workbook::cuda::MemoryFault>& same,
                           const std::optional<workbook::cuda::Launch>& launch) {
  using Kind = workbook::cuda::MemoryFault::Kind;
  (void)same, (void)launch;
  if (f.kind == Kind::misaligned && f.space == "global")
    return "square's x and y may start at any float (the tests pass x + 1, x + 2, x + 3), and "
           "square_2d's row r starts at x + r * ld, 16-byte aligned only when ld % 4 == 0: square "
           "a head of up to 3 floats one by one until the address is a multiple of 16, then "
           "float4s, then the tail (or take the scalar path when x and y are not equally "
           "misaligned).";
  if (f.kind == Kind::out_of_bounds && f.space == "global")
    return "In square every thread whose index is n or more must do nothing (a grid rounded up "
           "to whole blocks has some), the float4 body must stop at the last whole float4, and "
           "square_2d's threads must stop at rows and cols.";
  return "";
}

}  // namespace lab05::faults
