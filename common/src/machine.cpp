#include <workbook/machine.hpp>

#include <algorithm>
#include <exception>
#include <fstream>
#include <string>
#include <thread>

#include <unistd.h>

#include <xsimd/xsimd.hpp>

namespace workbook {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

#ifdef _SC_LEVEL1_DCACHE_SIZE
std::size_t sysconf_bytes(int name) {
  const long v = sysconf(name);
  return v > 0 ? static_cast<std::size_t>(v) : 0;
}
#endif

// "48K", "1024K", "32M" in /sys/devices/system/cpu/cpu0/cache/indexN/size; 0 if unreadable.
std::size_t sysfs_bytes(const std::string& text) {
  std::size_t value = 0, used = 0;
  try {
    value = std::stoul(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  const std::string unit = text.substr(used, 1);
  if (unit == "K") return value << 10;
  if (unit == "M") return value << 20;
  if (unit == "G") return value << 30;
  return value;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Linux lists each cache of cpu0 as indexN with its level, type (Data, Instruction, Unified) and
// size.
CacheSizes sysfs_cache_sizes() {
  CacheSizes sizes;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = first_line(dir + "/level"), type = first_line(dir + "/type");
    if (level.empty()) break;
    if (type == "Instruction") continue;
    const std::size_t bytes = sysfs_bytes(first_line(dir + "/size"));
    if (level == "1") sizes.l1d = bytes;
    if (level == "2") sizes.l2 = bytes;
    if (level == "3") sizes.l3 = bytes;
  }
  return sizes;
}

}  // namespace

std::string MachineInfo::fingerprint() const {
  return cpu_model + " | " + std::to_string(logical_cpus) + " CPUs | " + simd;
}

CacheSizes cache_sizes() {
  CacheSizes sizes;
#ifdef _SC_LEVEL1_DCACHE_SIZE
  sizes = {sysconf_bytes(_SC_LEVEL1_DCACHE_SIZE), sysconf_bytes(_SC_LEVEL2_CACHE_SIZE),
           sysconf_bytes(_SC_LEVEL3_CACHE_SIZE)};
#endif
  if (sizes.l1d == 0 || sizes.l2 == 0) {
    const CacheSizes sysfs = sysfs_cache_sizes();
    if (sizes.l1d == 0) sizes.l1d = sysfs.l1d;
    if (sizes.l2 == 0) sizes.l2 = sysfs.l2;
    if (sizes.l3 == 0) sizes.l3 = sysfs.l3;
  }
  return sizes;
}

MachineInfo machine_info() {
  MachineInfo m;
  m.cpu_model = cpu_model();
  m.logical_cpus = std::max(1u, std::thread::hardware_concurrency());
  m.simd = xsimd::default_arch::name();
  m.simd_bytes = xsimd::batch<float>::size * sizeof(float);
  const CacheSizes caches = cache_sizes();
  m.l1d_bytes = caches.l1d;
  m.l2_bytes = caches.l2;
  m.l3_bytes = caches.l3;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
#if defined(__clang__)
  m.compiler = "Clang " __clang_version__;
#elif defined(__GNUC__)
  m.compiler = "GCC " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
               std::to_string(__GNUC_PATCHLEVEL__);
#endif
  return m;
}

}  // namespace workbook
