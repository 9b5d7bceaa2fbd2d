#include <workbook/machine.hpp>

#include <algorithm>
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

std::size_t cache_size(int name) {
  const long v = sysconf(name);
  return v > 0 ? static_cast<std::size_t>(v) : 0;
}

}  // namespace

std::string MachineInfo::fingerprint() const {
  return cpu_model + " | " + std::to_string(logical_cpus) + " CPUs | " + simd;
}

MachineInfo machine_info() {
  MachineInfo m;
  m.cpu_model = cpu_model();
  m.logical_cpus = std::max(1u, std::thread::hardware_concurrency());
  m.simd = xsimd::default_arch::name();
  m.simd_bytes = xsimd::batch<float>::size * sizeof(float);
#ifdef _SC_LEVEL1_DCACHE_SIZE
  m.l1d_bytes = cache_size(_SC_LEVEL1_DCACHE_SIZE);
  m.l2_bytes = cache_size(_SC_LEVEL2_CACHE_SIZE);
  m.l3_bytes = cache_size(_SC_LEVEL3_CACHE_SIZE);
#endif
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
