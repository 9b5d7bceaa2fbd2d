#pragma once
/// \file archive.hpp
/// \brief Archives, through libarchive: the zip the grader writes (the Gradescope package) and the
/// submissions it reads (.zip, .tar, .tar.gz, .tgz, .tar.xz, .tar.bz2), unpacked as the hostile
/// input they may be.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace workbook::grade {

struct ArchiveEntry {
  std::string name;  ///< path inside the archive, with '/'
  std::string data;
  bool executable = false;
};

/// The bytes of a zip holding these files, in this order (deflated, with fixed dates and owners:
/// the same files give the same zip). The Unix modes are kept, so unzip restores executables.
std::string make_zip(const std::vector<ArchiveEntry>& entries);

/// The regular files of an archive held in memory, in order (for checks). Throws
/// std::runtime_error on a malformed archive or a failed checksum.
std::vector<ArchiveEntry> read_archive(const std::string& bytes);

/// Whether a file's name says it is an archive that unpack_archive reads.
bool is_archive_name(const std::filesystem::path& path);

/// What a submission's archive may hold once unpacked.
struct UnpackLimits {
  /// All files together, as unpacked (a zip bomb stops here).
  std::uint64_t max_bytes = 256ull << 20;
  /// Files, folders and links (a student repository with its .git fits).
  std::size_t max_entries = 20000;
};

/// Unpacks a zip or a (compressed) tar archive into `into` (created if needed). Refused, with a
/// std::runtime_error that names the archive and the entry: an absolute path or a `..`, a link
/// that could lead outside `into` (a symbolic link with an absolute or `..` target, a hard link to
/// anything but a file unpacked before), a device, fifo or socket, more bytes or entries than the
/// limits allow. Owners are not restored and modes are 0644 or 0755 (0755 if any execute bit).
/// What was unpacked before a refusal stays in `into`.
void unpack_archive(const std::filesystem::path& archive, const std::filesystem::path& into,
                    const UnpackLimits& limits = {});

}  // namespace workbook::grade
