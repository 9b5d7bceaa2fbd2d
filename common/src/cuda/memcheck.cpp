// compute-sanitizer's memcheck report, parsed and explained (see cuda/memcheck.hpp). Host code
// only: the parser is proved on recorded reports without a GPU (common/tests/cuda_host_test.cpp).
#include <workbook/cuda/memcheck.hpp>

#include <workbook/not_implemented.hpp>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

namespace workbook::cuda {
namespace {

std::uint64_t number(std::string text) {  // "4,000" or "0x7ff630804000"
  std::erase(text, ',');
  return std::stoull(text, nullptr, text.rfind("0x", 0) == 0 ? 16 : 10);
}

std::vector<FaultMeaning>& meanings() {
  static std::vector<FaultMeaning> m;
  return m;
}

std::string bytes(std::uint64_t n) {
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n / 1024) + " KiB";
  return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

std::string triple(const std::array<unsigned, 3>& v) {
  std::ostringstream s;
  if (v[1] == 0 && v[2] == 0)
    s << v[0];
  else
    s << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
  return s.str();
}

// The generic meaning of a fault: what any kernel that makes it does wrong.
std::string generic_meaning(const MemoryFault& f, const std::vector<MemoryFault>& same,
                            const std::optional<Launch>& launch) {
  if (f.kind == MemoryFault::Kind::misaligned)
    return "a " + std::to_string(f.size) + "-byte access needs an address that is a multiple of " +
           std::to_string(f.size) +
           " (a float4 load or store: 16-byte aligned). Take that path only where the address "
           "is aligned, and the scalar path elsewhere.";
  if (f.space == "shared") {
    // Threads of one block that fault at addresses one access apart, in thread order: the array
    // is indexed by threadIdx.x, and the first faulting thread is where it ends.
    unsigned first = f.thread[0];
    bool by_thread = same.size() >= 2;
    for (const MemoryFault& g : same) {
      if (g.block != f.block || g.thread[1] != f.thread[1] || g.thread[2] != f.thread[2]) continue;
      first = std::min(first, g.thread[0]);
      const std::int64_t step = static_cast<std::int64_t>(g.address - f.address),
                         threads = std::int64_t{g.thread[0]} - std::int64_t{f.thread[0]};
      by_thread = by_thread && step == threads * static_cast<std::int64_t>(f.size);
    }
    std::string m = "the block's shared memory ends before this address.";
    if (by_thread) {
      m = "threads " + std::to_string(first) +
          " and up of the block fault, each one element "
          "further: a shared array indexed by threadIdx.x that holds " +
          std::to_string(first) + " elements of " + std::to_string(f.size) + " bytes";
      if (launch && launch->block[0] > first)
        m += ", in blocks of " + std::to_string(launch->block[0]) + " threads";
      m += ". Size the shared array by the block's threads (one constant for both, or dynamic "
           "shared memory sized at the launch), or loop with a stride over the array.";
    }
    return m;
  }
  if (f.allocation && f.allocation_size && f.offset() >= 0 &&
      static_cast<std::uint64_t>(f.offset()) >= *f.allocation_size)
    return "a thread past the end of the data: keep the bounds check (if (i < n), or c < cols in "
           "a loop) on every access, loads and stores, and on every path (the float4 body and the "
           "tail alike).";
  if (f.allocation && f.offset() < 0)
    return "an index below zero (or a pointer moved back before the start of the buffer).";
  return "";
}

}  // namespace

std::vector<MemoryFault> parse_memcheck(std::string_view report) {
  static const std::regex invalid(R"(Invalid __(\w+)__ (read|write) of size (\d+) bytes?)");
  static const std::regex at(R"(^at (.+?)\+0x[0-9a-fA-F]+(?: in (.+):(\d+))?$)");
  static const std::regex by(R"(by thread \((\d+),(\d+),(\d+)\) in block \((\d+),(\d+),(\d+)\))");
  static const std::regex address(R"((?:Address|Access to) (0x[0-9a-fA-F]+) is (\w[\w ]*\w))");
  static const std::regex nearest(
      R"(nearest allocation at (0x[0-9a-fA-F]+) of size ([0-9,]+) bytes?)");
  std::vector<MemoryFault> faults;
  std::istringstream in{std::string(report)};
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    const std::size_t start = line.find_first_not_of("= \t");
    if (start == std::string::npos) continue;
    line = line.substr(start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (std::regex_search(line, m, invalid)) {
      MemoryFault f;
      f.space = m[1];
      f.access = m[2];
      f.size = std::stoul(m[3]);
      faults.push_back(f);
      continue;
    }
    if (faults.empty()) continue;
    MemoryFault& f = faults.back();
    if (f.kernel.empty() && std::regex_search(line, m, at)) {
      f.kernel = m[1];
      // Internal linkage is no part of the name a student wrote; the parameter list is noise.
      for (const std::string anonymous : {"(anonymous namespace)::", "<unnamed>::"})
        for (std::size_t at = f.kernel.find(anonymous); at != std::string::npos;
             at = f.kernel.find(anonymous))
          f.kernel.erase(at, anonymous.size());
      if (const std::size_t paren = f.kernel.find('('); paren != std::string::npos)
        f.kernel.resize(paren);
      if (m[2].matched) {
        f.file = m[2];
        f.line = std::stoi(m[3]);
      }
    } else if (std::regex_search(line, m, by)) {
      for (int k = 0; k < 3; ++k) {
        f.thread[k] = static_cast<unsigned>(std::stoul(m[1 + k]));
        f.block[k] = static_cast<unsigned>(std::stoul(m[4 + k]));
      }
    } else if (std::regex_search(line, m, address)) {
      f.address = number(m[1]);
      const std::string what = m[2];
      f.kind = what.find("misaligned") != std::string::npos      ? MemoryFault::Kind::misaligned
               : what.find("out of bounds") != std::string::npos ? MemoryFault::Kind::out_of_bounds
                                                                 : MemoryFault::Kind::other;
    } else if (std::regex_search(line, m, nearest)) {
      f.allocation = number(m[1]);
      f.allocation_size = number(m[2]);
    }
  }
  return faults;
}

bool add_fault_meaning(FaultMeaning meaning) {
  meanings().push_back(std::move(meaning));
  return true;
}

std::string explain_faults(const std::vector<MemoryFault>& faults,
                           const std::optional<Launch>& launch) {
  if (faults.empty()) return "";
  const MemoryFault& f = faults.front();
  std::vector<MemoryFault> same;  // the faults of the same kernel and line
  for (const MemoryFault& g : faults)
    if (g.kernel == f.kernel && g.line == f.line && g.access == f.access) same.push_back(g);

  std::ostringstream s;
  s << "your kernel " << (f.kernel.empty() ? "(unnamed)" : f.kernel);
  if (!f.file.empty()) s << " at " << repository_path(f.file.c_str()) << ":" << f.line;
  s << " made an invalid " << f.size << "-byte " << f.access << " of " << f.space << " memory";
  s << " (thread " << triple(f.thread) << " of block " << triple(f.block);
  if (launch) s << "; the launch was " << launch->describe();
  s << "; " << same.size() << (same.size() == 1 ? " such access" : " such accesses")
    << " reported by compute-sanitizer). ";
  if (f.kind == MemoryFault::Kind::misaligned) {
    const std::uint64_t past = f.address % f.size;
    s << "The address is " << bytes(past) << " past a " << f.size << "-byte boundary";
    if (f.allocation) {
      s << " (byte " << f.offset() << " of an allocation";
      if (f.allocation_size) s << " of " << bytes(*f.allocation_size);
      if (*f.allocation % 256 == 0) s << ", which starts 256-byte aligned";
      s << ")";
    }
    s << ": ";
  } else if (f.space == "shared") {
    s << "The address is past the end of the block's shared memory: ";
  } else if (f.allocation && f.allocation_size) {
    const std::int64_t off = f.offset();
    const auto size = static_cast<std::int64_t>(*f.allocation_size);
    if (off >= size)
      s << "The address is "
        << (off == size ? "just" : bytes(static_cast<std::uint64_t>(off - size)))
        << " past the end of an allocation of " << bytes(*f.allocation_size) << " (element "
        << off / static_cast<std::int64_t>(f.size) << " of an array of "
        << size / static_cast<std::int64_t>(f.size) << " elements of " << f.size << " bytes): ";
    else if (off < 0)
      s << "The address is " << bytes(static_cast<std::uint64_t>(-off))
        << " before the start of an allocation of " << bytes(*f.allocation_size) << ": ";
    else
      s << "The address is byte " << off << " of an allocation of " << bytes(*f.allocation_size)
        << ": ";
  } else {
    s << "The address is outside every allocation: ";
  }
  std::string meaning = generic_meaning(f, same, launch);
  for (const FaultMeaning& lab : meanings())
    if (std::string more = lab(f, same, launch); !more.empty()) meaning += " " + more;
  s << meaning;
  return s.str();
}

std::string find_compute_sanitizer() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("WORKBOOK_COMPUTE_SANITIZER"); env != nullptr && *env != 0)
    candidates.emplace_back(env);
#ifdef WORKBOOK_COMPUTE_SANITIZER_PATH
  candidates.emplace_back(WORKBOOK_COMPUTE_SANITIZER_PATH);
#endif
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty()) candidates.push_back(fs::path(dir) / "compute-sanitizer");
  }
  candidates.emplace_back("/usr/local/cuda/bin/compute-sanitizer");
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (!p.empty() && fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

}  // namespace workbook::cuda
