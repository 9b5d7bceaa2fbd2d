#pragma once
/// \file zip.hpp
/// \brief A minimal zip writer (stored entries, no compression): enough for an autograder package,
/// with no dependency beyond the standard library.

#include <cstdint>
#include <string>
#include <vector>

namespace workbook::grade {

struct ZipEntry {
  std::string name;    ///< path inside the archive, with '/'
  std::string data;
  bool executable = false;
};

/// The bytes of a zip archive holding these entries.
std::string make_zip(const std::vector<ZipEntry>& entries);

/// The entry names of a zip archive (for checks); throws on a malformed archive.
std::vector<std::string> zip_names(const std::string& archive);

/// CRC-32 (IEEE 802.3), as zip uses it.
std::uint32_t crc32(const std::string& data);

}  // namespace workbook::grade
