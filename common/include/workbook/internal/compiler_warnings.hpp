#pragma once
/// \file compiler_warnings.hpp
/// \brief The compiler's warnings about a lab's own code, shown beside a failing test: a warning
/// (a comparison that is always false, a variable used uninitialised) is often the mistake itself,
/// and the build printed it where a student no longer looks.

#include <cstddef>
#include <string>

namespace workbook::testing::internal {

/// The warnings that cmake/keep_warnings.sh kept beside the object files of the lab's
/// implementation, under the folder WORKBOOK_WARNINGS_DIR names (ctest sets it): each warning's
/// line, its paths from labs/ (or solutions/) on, and the source line the compiler showed under
/// it; at most `most` warnings. "" when there are none, or no folder is named.
std::string compiler_warnings(std::size_t most = 6);

/// compiler_warnings() under a heading, each line indented, ready to print under a failure; ""
/// when there are none.
std::string compiler_warnings_report();

}  // namespace workbook::testing::internal
