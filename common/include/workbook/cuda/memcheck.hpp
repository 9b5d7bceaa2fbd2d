#pragma once
/// \file cuda/memcheck.hpp
/// \brief A kernel's invalid memory access, explained: compute-sanitizer's memcheck report parsed
/// (kernel, source line, access, address against its allocation) and said in the lab's terms.
///
/// When a kernel faults (cudaErrorIllegalAddress, cudaErrorMisalignedAddress, ...), CUDA only says
/// that some kernel did. A GPU test executable (workbook::cuda_testing_main) then re-runs the
/// failing test, alone and with the same seed, under `compute-sanitizer --tool memcheck`, and the
/// first message of the failure becomes the explanation (see explain_kernel_faults_with in
/// check.hpp). A lab adds what a fault means for its kernels with add_fault_meaning.

#include <workbook/cuda/launches.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace workbook::cuda {

/// One invalid access of a memcheck report.
struct MemoryFault {
  /// What memcheck said of the address ("Address 0x... is misaligned", "... is out of bounds").
  enum class Kind {
    out_of_bounds,  ///< outside the memory it may touch
    misaligned,     ///< not a multiple of the access's size
    other,          ///< anything else memcheck said of it
  };
  Kind kind = Kind::other;           ///< see Kind
  std::string space;                 ///< "global", "shared" or "local"
  std::string access;                ///< "read" or "write"
  std::size_t size = 0;              ///< bytes accessed at once (16 for a float4)
  std::string kernel;                ///< the kernel's name, without its parameter list
  std::string file;                  ///< the source file (empty without -lineinfo)
  int line = 0;                      ///< the source line (0 without -lineinfo)
  std::array<unsigned, 3> thread{};  ///< threadIdx of the faulting thread
  std::array<unsigned, 3> block{};   ///< blockIdx of the faulting thread
  std::uint64_t address = 0;         ///< the address accessed (a shared memory offset for shared)
  /// The nearest allocation's start, when the report names one (global memory).
  std::optional<std::uint64_t> allocation;
  std::optional<std::uint64_t> allocation_size;  ///< and its size in bytes

  /// address - allocation: negative before it, >= allocation_size past its end.
  std::int64_t offset() const {
    return static_cast<std::int64_t>(address - allocation.value_or(address));
  }
};

/// Every invalid access of compute-sanitizer's memcheck output (its log or its stdout), in order.
std::vector<MemoryFault> parse_memcheck(std::string_view report);

/// What a fault means in one lab's terms ("x + r * cols is 16-byte aligned only when cols % 4 ==
/// 0"), or "" when the lab has nothing to add. `faults` are the first fault's kernel's faults.
using FaultMeaning =
    std::function<std::string(const MemoryFault& first, const std::vector<MemoryFault>& faults,
                              const std::optional<Launch>& launch)>;
/// Adds a lab's meaning (from a test file: `const bool added = add_fault_meaning(...)`). Returns
/// true.
bool add_fault_meaning(FaultMeaning meaning);

/// The explanation of a report's first fault: which kernel, which line, what access, where against
/// its allocation, and what that means (generic, then the labs' meanings). `launch` is the launch
/// the harness observed, if any. "" when the report holds no fault.
std::string explain_faults(const std::vector<MemoryFault>& faults,
                           const std::optional<Launch>& launch);

/// Where compute-sanitizer is: $WORKBOOK_COMPUTE_SANITIZER, the one found with the CUDA Toolkit at
/// configure time, the PATH, /usr/local/cuda/bin; "" when none.
std::string find_compute_sanitizer();

}  // namespace workbook::cuda
