#pragma once
/// \file ceilings.hpp
/// \brief The machine's ceilings, measured on the machine: memory bandwidth (copy and triad, one
/// thread and all threads), L1 load bandwidth, and FMA peak (one core and all cores).
///
/// A roofline is only as good as its roofs, and datasheet numbers are not what a student's code
/// can reach on their laptop or in a VM. So the harness measures them with small, well-understood
/// kernels, caches the result per machine in the build tree, and re-measures on demand
/// (`workbook-probe --remeasure`).

#include <workbook/machine.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace workbook {

/// Measured ceilings. Bandwidths count bytes read plus bytes written (a copy of n bytes moves 2n),
/// over working sets far larger than the caches unless named otherwise. Each is the best of several
/// runs: noise only ever slows a run down, so the fastest run estimates what the machine can do.
struct Ceilings {
  /// Bump when fields or their measurement change: older caches are re-measured.
  static constexpr int kFormat = 5;  // 5: the FMA and int8 probes of AVX2 machines fixed

  /// The machine they were measured on (its fingerprint validates a cache).
  MachineInfo machine;
  std::string measured_at;  ///< UTC, ISO 8601
  unsigned threads = 1;     ///< threads behind the *_all figures

  double copy_1t_gbs = 0;            ///< best of the two store kinds below, one thread
  double copy_regular_1t_gbs = 0;    ///< copy with ordinary stores (each line read before written)
  double copy_streaming_1t_gbs = 0;  ///< copy with streaming stores (no read-for-ownership)
  double copy_all_gbs = 0;           ///< best copy, all threads
  double triad_1t_gbs = 0;           ///< a[i] = b[i] + s * c[i], one thread
  double triad_all_gbs = 0;          ///< the same, all threads
  double read_1t_gbs = 0;            ///< a sum over a large array (reads only), one thread
  double read_all_gbs = 0;           ///< the same, all threads
  double l1_read_1t_gbs = 0;         ///< loads from a buffer that fits in the L1 data cache
  double fma_1t_gflops = 0;          ///< fp32 fused multiply-add peak of one core (an FMA = 2 FLOP)
  double fma_all_gflops = 0;         ///< the same, all cores
  double int8_dot_1t_gops = 0;       ///< int8 dot-product peak of one core: u8 x s8 products summed
                                     ///< into int32 (a multiply and an add are 2 OP)
  double int8_dot_all_gops = 0;      ///< the same, all cores
  std::string
      int8_dot_instruction;  ///< what int8_dot was measured with, e.g. "AVX-512 VNNI vpdpbusd"
  std::size_t cache_knee_bytes = 0;  ///< the working set past which copy bandwidth is within 20% of
                                     ///< memory's: what "larger than the caches" means here
  /// Empty for this CPU's ceilings. For a GPU's (workbook/cuda/ceilings.hpp), the device they were
  /// measured on, e.g. "NVIDIA H100 80GB HBM3, 132 SMs, sm_90": then every figure is the whole
  /// device's (the *_1t and *_all fields hold the same value), copy/triad/read are device-memory
  /// kernels, l1_read_1t_gbs is a copy that stays in the L2 cache, and `threads` counts SMs.
  std::string device;

  /// The cache's JSON record: every field, the format number and the machine's fingerprint.
  nlohmann::json to_json() const;
  /// Throws nlohmann::json::exception on a missing field.
  static Ceilings from_json(const nlohmann::json& j);
};

/// Called with one line of progress at a time ("copy, 1 thread, streaming stores: 48.1 GB/s").
using Progress = std::function<void(const std::string&)>;

/// Measures every ceiling (about 2-4 seconds). Run it on an otherwise idle machine.
Ceilings measure_ceilings(const Progress& progress = {});

/// The ceilings cached at `path`, if that file exists, has the current format and was measured on
/// this machine (same fingerprint).
std::optional<Ceilings> load_ceilings(const std::string& path);

/// Writes the cache atomically (a temporary file renamed into place).
void save_ceilings(const std::string& path, const Ceilings& ceilings);

/// load_ceilings(path), or measure (with progress) and save when it is missing, stale or when
/// `remeasure` is set.
Ceilings load_or_measure_ceilings(const std::string& path, bool remeasure,
                                  const Progress& progress = {});

/// The cache at `path` when it exists, has the current format and `valid` accepts it (the GPU's
/// check their device instead of this CPU). A damaged file reads as missing: it is re-measured.
std::optional<Ceilings> load_ceilings(const std::string& path,
                                      const std::function<bool(const Ceilings&)>& valid);
/// The same for any kind of ceilings (the GPU's, workbook/cuda/ceilings.hpp): the cache is used
/// when `valid` accepts what it holds, else `measure` runs and its result is saved. `what` names
/// the thing measured in the progress line ("machine", "GPU"). Throws what `measure` throws
/// (workbook::Skipped without a GPU), or std::runtime_error when the cache cannot be written.
Ceilings load_or_measure_ceilings(const std::string& path, bool remeasure, const Progress& progress,
                                  const std::function<bool(const Ceilings&)>& valid,
                                  const std::function<Ceilings(const Progress&)>& measure,
                                  const std::string& what);

/// The int8 dot-product instruction this build uses (the best the compiler targets): "AVX-512 VNNI
/// vpdpbusd", "AVX-VNNI vpdpbusd", "AVX2 vpmaddubsw + vpmaddwd" or "scalar".
const char* int8_dot_instruction();

/// The kernel behind copy_streaming_1t_gbs, for a bench to time beside its own kernels in one run:
/// y = x with streaming stores (whole SIMD batches, then a tail; y must be 64-byte aligned).
void copy_streaming(std::span<const float> x, std::span<float> y);

/// The cache path tests and tools use: $WORKBOOK_CEILINGS, else ./workbook-ceilings.json.
std::string default_ceilings_path();

}  // namespace workbook
