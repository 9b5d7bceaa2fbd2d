// Archives through libarchive. Reading is restricted to the formats and filters a submission
// comes in (zip; tar in its gzip, bzip2 and xz forms): libarchive's other readers (mtree, which
// reads files named in the archive; filters that run external programs) are not for hostile input.
#include <grade/archive.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <archive.h>
#include <archive_entry.h>

namespace workbook::grade {
namespace {

namespace fs = std::filesystem;

using Reader = std::unique_ptr<archive, decltype(&archive_read_free)>;
using Writer = std::unique_ptr<archive, decltype(&archive_write_free)>;
using Entry = std::unique_ptr<archive_entry, decltype(&archive_entry_free)>;

// 2000-01-01 00:00 UTC: a fixed date, so the same files give the same zip (and one that a DOS
// date can hold in every time zone).
constexpr time_t kFixedTime = 946684800;

std::string error_of(archive* a) {
  const char* text = archive_error_string(a);
  return text != nullptr ? text : "unknown libarchive error";
}

Reader open_reader() {
  Reader a(archive_read_new(), archive_read_free);
  if (!a) throw std::runtime_error("libarchive: out of memory");
  archive_read_support_format_zip(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_bzip2(a.get());
  archive_read_support_filter_xz(a.get());
  return a;
}

// The next entry, or nullptr at the end; throws on a damaged archive.
archive_entry* next(archive* a, const std::string& what) {
  archive_entry* e = nullptr;
  const int r = archive_read_next_header(a, &e);
  if (r == ARCHIVE_EOF) return nullptr;
  if (r < ARCHIVE_WARN) throw std::runtime_error(what + ": " + error_of(a));
  return e;
}

// Calls `sink` with each block of the current entry's data; throws on a damaged entry.
template <typename Sink>
void read_data(archive* a, const std::string& what, Sink&& sink) {
  std::array<char, 64 * 1024> buffer;
  for (;;) {
    const la_ssize_t n = archive_read_data(a, buffer.data(), buffer.size());
    if (n == 0) return;
    if (n < 0) throw std::runtime_error(what + ": " + error_of(a));
    sink(buffer.data(), static_cast<std::size_t>(n));
  }
}

bool has_dot_dot(const fs::path& p) {
  return std::any_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
}

// A path inside the archive that stays inside the folder it is unpacked into: relative, no `..`,
// "./" and trailing '/' removed. Empty when it is not one.
std::string inside_path(const char* raw) {
  if (raw == nullptr || *raw == '\0' || *raw == '/' || has_dot_dot(raw)) return {};
  std::string s = fs::path(raw).lexically_normal().generic_string();
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s == "." ? std::string() : s;
}

constexpr std::array<const char*, 6> kArchiveExtensions = {".zip", ".tar",    ".tar.gz",
                                                           ".tgz", ".tar.xz", ".tar.bz2"};

}  // namespace

std::string make_zip(const std::vector<ArchiveEntry>& entries) {
  std::string out;
  Writer a(archive_write_new(), archive_write_free);
  if (!a) throw std::runtime_error("libarchive: out of memory");
  auto check = [&](int r, const char* step) {
    if (r != ARCHIVE_OK)
      throw std::runtime_error(std::string("writing a zip: ") + step + ": " + error_of(a.get()));
  };
  check(archive_write_set_format_zip(a.get()), "format");
  check(archive_write_set_bytes_in_last_block(a.get(), 1), "no padding");  // a zip is not a tape
  const auto append = [](archive*, void* to, const void* data, size_t size) -> la_ssize_t {
    static_cast<std::string*>(to)->append(static_cast<const char*>(data), size);
    return static_cast<la_ssize_t>(size);
  };
  check(archive_write_open(a.get(), &out, nullptr, append, nullptr), "open");
  for (const ArchiveEntry& e : entries) {
    Entry header(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname_utf8(header.get(), e.name.c_str());
    archive_entry_set_filetype(header.get(), AE_IFREG);
    archive_entry_set_perm(header.get(), e.executable ? 0755 : 0644);
    archive_entry_set_size(header.get(), static_cast<la_int64_t>(e.data.size()));
    archive_entry_set_mtime(header.get(), kFixedTime, 0);
    archive_entry_set_uid(header.get(), 0);
    archive_entry_set_gid(header.get(), 0);
    check(archive_write_header(a.get(), header.get()), e.name.c_str());
    if (!e.data.empty() && archive_write_data(a.get(), e.data.data(), e.data.size()) !=
                               static_cast<la_ssize_t>(e.data.size()))
      throw std::runtime_error("writing a zip: " + e.name + ": " + error_of(a.get()));
  }
  check(archive_write_close(a.get()), "close");
  return out;
}

std::vector<ArchiveEntry> read_archive(const std::string& bytes) {
  Reader a = open_reader();
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    throw std::runtime_error("reading an archive: " + error_of(a.get()));
  std::vector<ArchiveEntry> files;
  while (archive_entry* e = next(a.get(), "reading an archive")) {
    if (archive_entry_filetype(e) != AE_IFREG) continue;
    ArchiveEntry& f = files.emplace_back();
    f.name = archive_entry_pathname(e) != nullptr ? archive_entry_pathname(e) : "";
    f.executable = (archive_entry_perm(e) & 0111) != 0;
    read_data(a.get(), "reading " + f.name,
              [&](const char* data, std::size_t n) { f.data.append(data, n); });
  }
  return files;
}

bool is_archive_name(const fs::path& path) {
  const std::string n = path.filename().string();
  return std::any_of(kArchiveExtensions.begin(), kArchiveExtensions.end(), [&](const char* ext) {
    const std::size_t k = std::strlen(ext);
    return n.size() > k && n.compare(n.size() - k, k, ext) == 0;
  });
}

void unpack_archive(const fs::path& archive, const fs::path& into, const UnpackLimits& limits) {
  const std::string name = archive.filename().string();
  auto refuse = [&](const std::string& entry, const std::string& why) {
    throw std::runtime_error(name + ": '" + entry + "' " + why + ": the archive is refused");
  };
  Reader a = open_reader();
  if (archive_read_open_filename(a.get(), archive.c_str(), 64 * 1024) != ARCHIVE_OK)
    throw std::runtime_error(name + ": " + error_of(a.get()));
  fs::create_directories(into);
  std::size_t entries = 0;
  std::uint64_t bytes = 0;
  while (archive_entry* e = next(a.get(), name)) {
    const char* raw = archive_entry_pathname(e);
    const std::string shown = raw != nullptr ? raw : "";
    const std::string relative = inside_path(raw);
    if (relative.empty()) {
      if (shown == "./" || shown == ".")
        continue;  // the folder itself, as `tar -C dir .` writes it
      refuse(shown, "has an absolute path or a '..' (every path must stay inside the submission)");
    }
    if (++entries > limits.max_entries)
      refuse(shown, "is past the limit of " + std::to_string(limits.max_entries) + " entries");
    const fs::path target = into / relative;
    fs::create_directories(target.parent_path());
    if (const char* link = archive_entry_hardlink(e)) {
      // A hard link: only to a file this archive unpacked before.
      const std::string to = inside_path(link);
      if (to.empty() || !fs::is_regular_file(fs::symlink_status(into / to)))
        refuse(shown,
               "is a hard link to '" + std::string(link) + "', not to a file unpacked before it");
      fs::remove(target);
      fs::create_hard_link(into / to, target);
      continue;
    }
    switch (archive_entry_filetype(e)) {
      case AE_IFDIR:
        fs::create_directories(target);
        break;
      case AE_IFLNK: {
        // A relative target without `..` resolves below the link's own folder, even through other
        // such links; anything else could reach outside.
        const char* to = archive_entry_symlink(e);
        const std::string link = to != nullptr ? to : "";
        if (link.empty() || link.front() == '/' || has_dot_dot(link))
          refuse(shown,
                 "is a symbolic link to '" + link + "', which could lead outside the submission");
        fs::remove(target);
        fs::create_symlink(link, target);
        break;
      }
      case AE_IFREG: {
        fs::remove(target);  // never write through a link an earlier entry made
        std::ofstream out(target, std::ios::binary);
        if (!out) throw std::runtime_error(name + ": cannot create " + target.string());
        read_data(a.get(), name + ": '" + shown + "'", [&](const char* data, std::size_t n) {
          bytes += n;
          if (bytes > limits.max_bytes)
            refuse(shown, "takes the unpacked size past the limit of " +
                              std::to_string(limits.max_bytes) + " bytes");
          out.write(data, static_cast<std::streamsize>(n));
        });
        out.close();
        if (!out) throw std::runtime_error(name + ": cannot write " + target.string());
        fs::permissions(target,
                        (archive_entry_perm(e) & 0111) != 0 ? fs::perms(0755) : fs::perms(0644));
        break;
      }
      default:
        refuse(shown, "is a device, fifo or socket (a submission holds files, folders and links)");
    }
  }
}

}  // namespace workbook::grade
