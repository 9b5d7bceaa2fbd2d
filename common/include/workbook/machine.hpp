#pragma once
/// \file machine.hpp
/// \brief What machine this is: CPU model, logical CPUs, the SIMD instruction set the harness was
/// compiled for, cache sizes as the OS reports them.

#include <cstddef>
#include <string>

namespace workbook {

/// The facts about this machine a measurement depends on, recorded with every set of ceilings so
/// that a cache measured elsewhere (another CPU, another build) is never trusted.
struct MachineInfo {
  std::string cpu_model;      ///< /proc/cpuinfo "model name" (or "unknown")
  unsigned logical_cpus = 1;  ///< std::thread::hardware_concurrency()
  std::string simd;  ///< xsimd's architecture for this build, e.g. "avx512bw", "avx2", "neon64"
  std::size_t simd_bytes = 0;  ///< bytes in one SIMD register (64 for AVX-512)
  std::size_t l1d_bytes = 0;   ///< as the OS reports them; a virtual machine may report the whole
  std::size_t l2_bytes = 0;  ///< socket's L3, so the harness measures where bandwidth really drops
  std::size_t l3_bytes = 0;  ///< (Ceilings::cache_knee_bytes)
  std::string hostname;      ///< shown in reports, not part of the fingerprint
  std::string compiler;      ///< e.g. "GCC 12.2.0"

  /// What a cache of measured ceilings is valid for: same CPU model, CPU count and SIMD build.
  std::string fingerprint() const;
};

/// Reads the facts above (cheap; no measurement).
MachineInfo machine_info();

/// The data caches one core sees, in bytes, as the OS reports them; 0 where it reports nothing.
struct CacheSizes {
  std::size_t l1d = 0;  ///< level 1 data cache, per core
  std::size_t l2 = 0;   ///< level 2, per core on current x86 and ARM server CPUs
  std::size_t l3 = 0;   ///< last level, shared: by a socket, a CCX, or as a virtual machine says
};

/// Reads the cache sizes: glibc's sysconf where it knows them (it asks the CPU, through cpuid on
/// x86), else Linux's /sys/devices/system/cpu/cpu0/cache (where ARM and some containers report
/// them). Cheap, but it reads files: call it once, not per kernel call.
CacheSizes cache_sizes();

}  // namespace workbook
