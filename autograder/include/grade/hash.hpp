#pragma once
/// \file hash.hpp
/// \brief SHA-256 of file contents and cache keys, as hex (Nettle's, not a hand-written one).
/// The grader's alone (workbook_grade_core): the sandbox library that sealed checkers link stays
/// free of Nettle, so that nothing in the jail loads it.

#include <string>
#include <string_view>

namespace workbook::grade {

/// SHA-256 of data as 64 lower-case hex digits: identifies file contents in records (identical
/// submissions, the kit's secret files), keys the trusted build's cache, names Slurm jobs.
std::string hash_hex(std::string_view data);

}  // namespace workbook::grade
