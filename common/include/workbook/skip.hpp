#pragma once
/// \file skip.hpp
/// \brief A test or perf case that cannot run on this machine at all (no GPU, no driver), as
/// opposed to one that fails: it reports "skipped" and exits with kSkipReturnCode, which CTest
/// maps to "Skipped" through the SKIP_RETURN_CODE property.
///
/// Only the absence of what a test needs may skip it. A CUDA call that fails on a real device is a
/// failure, never a skip: see workbook/cuda/device.hpp.

#include <stdexcept>
#include <string>

namespace workbook {

/// The exit code of a skipped test (the autotools convention, which CTest's SKIP_RETURN_CODE uses).
inline constexpr int kSkipReturnCode = 77;

/// Thrown where a case cannot run here; its message says why ("no CUDA device: skipped (...)").
class Skipped : public std::runtime_error {
 public:
  /// `why` is the whole line the test prints, as workbook::cuda::skip_message() builds it.
  explicit Skipped(const std::string& why) : std::runtime_error(why) {}
};

}  // namespace workbook
