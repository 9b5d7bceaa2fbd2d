// A zip writer with stored (uncompressed) entries: the format of PKWARE's APPNOTE, sections 4.3.7
// (local header), 4.3.12 (central directory) and 4.3.16 (end of central directory).
#include <grade/zip.hpp>

#include <array>
#include <stdexcept>

namespace workbook::grade {
namespace {

void put16(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}
std::uint32_t get16(const std::string& s, std::size_t at) {
  if (at + 2 > s.size()) throw std::runtime_error("zip: truncated");
  return static_cast<unsigned char>(s[at]) | static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 8;
}
std::uint32_t get32(const std::string& s, std::size_t at) { return get16(s, at) | get16(s, at + 2) << 16; }

// 1980-01-01 00:00, DOS format: fixed, so the same tree gives the same archive.
constexpr std::uint32_t kDosTime = 0, kDosDate = (0 << 9) | (1 << 5) | 1;

}  // namespace

std::uint32_t crc32(const std::string& data) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string make_zip(const std::vector<ZipEntry>& entries) {
  std::string out, central;
  for (const ZipEntry& e : entries) {
    if (e.data.size() >= 0xFFFFFFFFu || out.size() >= 0xFFFFFFFFu) throw std::runtime_error("zip: entry too large (no zip64)");
    const std::uint32_t offset = static_cast<std::uint32_t>(out.size());
    const std::uint32_t crc = crc32(e.data);
    const auto size = static_cast<std::uint32_t>(e.data.size());
    const auto name_length = static_cast<std::uint32_t>(e.name.size());
    put32(out, 0x04034b50);  // local file header
    put16(out, 20);          // version needed
    put16(out, 0x0800);      // flags: UTF-8 names
    put16(out, 0);           // stored
    put16(out, kDosTime);
    put16(out, kDosDate);
    put32(out, crc);
    put32(out, size);
    put32(out, size);
    put16(out, name_length);
    put16(out, 0);
    out += e.name;
    out += e.data;

    put32(central, 0x02014b50);  // central directory header
    put16(central, 0x0314);      // made by: Unix, 2.0 (so the mode below counts)
    put16(central, 20);
    put16(central, 0x0800);
    put16(central, 0);
    put16(central, kDosTime);
    put16(central, kDosDate);
    put32(central, crc);
    put32(central, size);
    put32(central, size);
    put16(central, name_length);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    const std::uint32_t mode = e.executable ? 0100755 : 0100644;
    put32(central, mode << 16);  // external attributes: the Unix mode
    put32(central, offset);
    central += e.name;
  }
  const auto central_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);  // end of central directory
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, central_offset);
  put16(out, 0);
  return out;
}

std::vector<std::string> zip_names(const std::string& archive) {
  if (archive.size() < 22) throw std::runtime_error("zip: too short");
  std::size_t end = archive.size() - 22;
  while (get32(archive, end) != 0x06054b50) {
    if (end == 0) throw std::runtime_error("zip: no end of central directory");
    --end;
  }
  const std::uint32_t count = get16(archive, end + 10);
  std::size_t at = get32(archive, end + 16);
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (get32(archive, at) != 0x02014b50) throw std::runtime_error("zip: bad central directory");
    const std::uint32_t n = get16(archive, at + 28), extra = get16(archive, at + 30), comment = get16(archive, at + 32);
    names.push_back(archive.substr(at + 46, n));
    at += 46 + n + extra + comment;
  }
  return names;
}

}  // namespace workbook::grade
