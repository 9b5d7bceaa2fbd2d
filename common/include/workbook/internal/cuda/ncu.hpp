#pragma once
/// \file internal/cuda/ncu.hpp
/// \brief Nsight Compute's view of a kernel, next to the harness's: the Speed-of-Light section
/// (how busy the SMs and the memory system were, as a percentage of their peak), the kernel's own
/// duration, the bytes it really moved, and a verdict in the terms of the roofline.
///
/// A lab's perf worker runs `labNN_perf --ncu <case>`: it times the case with the harness, then
/// runs it again under `ncu` and prints both (see cuda_perf_main). This header holds the parts
/// that need no GPU: the metric list, the CSV reader, and the classification.

#include <workbook/roofline.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// Nsight Compute (ncu), read by the harness: the metrics it asks for, the CSV reader, the verdict.
namespace workbook::cuda::ncu {

// The metrics the harness asks ncu for (the SOL section's headline figures and a few more).

/// The kernel's duration as the GPU timed it: what the harness's own timer is checked against.
inline constexpr const char* kDuration = "gpu__time_duration.sum";
/// SOL "Compute (SM) Throughput": the busiest SM unit, % of its peak.
inline constexpr const char* kComputeSol = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
/// SOL "Memory Throughput": the busiest level of the memory system (L1, L2 or DRAM), % of peak.
inline constexpr const char* kMemorySol =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
/// Device-memory (DRAM) throughput alone, % of peak.
inline constexpr const char* kDramSol = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
/// Bytes read from device memory: compared with the minimum bytes the roofline counts.
inline constexpr const char* kDramRead = "dram__bytes_read.sum";
/// Bytes written to device memory.
inline constexpr const char* kDramWrite = "dram__bytes_write.sum";
/// Achieved occupancy: active warps per SM, % of the most it can hold.
inline constexpr const char* kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
/// Registers per thread, which limit occupancy.
inline constexpr const char* kRegisters = "launch__registers_per_thread";
/// Bytes the L2 cache served (all requests): far above DRAM's when data is read again and again.
inline constexpr const char* kL2Bytes = "lts__t_bytes.sum";
/// Of each 32-byte sector that global loads fetched, the % of bytes the threads used: 100 when
/// a warp's loads are coalesced, 12.5 when its 32 threads read 4 bytes each from 32 sectors.
inline constexpr const char* kLoadSectorUse =
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct";
/// All of the above, comma-separated, for `ncu --metrics`.
std::string metric_list();

/// One profiled kernel launch.
struct Launch {
  std::string kernel;              ///< the kernel's (demangled) name
  std::string grid;                ///< blocks in the grid, as ncu prints it: "(1024, 1, 1)"
  std::string block;               ///< threads per block, as ncu prints it: "(256, 1, 1)"
  double seconds = 0;              ///< gpu__time_duration
  double compute_pct = 0;          ///< SM throughput, % of peak ("Compute (SM) Throughput")
  double memory_pct = 0;           ///< memory throughput, % of peak ("Memory Throughput")
  double dram_pct = 0;             ///< device memory throughput, % of peak
  double dram_bytes = 0;           ///< bytes read from plus written to device memory
  double occupancy_pct = 0;        ///< achieved occupancy
  double registers = 0;            ///< registers per thread
  double l2_bytes = 0;             ///< bytes the L2 served
  double load_sector_use_pct = 0;  ///< % of each loaded sector's bytes used (0: not measured)
};

/// Reads the output of `ncu --csv --page raw --print-units base --metrics <metric_list()>`: one
/// Launch per profiled kernel, in order. Throws std::runtime_error when the text holds no table.
std::vector<Launch> parse_csv(std::string_view text);

/// When ncu could not profile (no permission to read the counters, no supported GPU, ...), a
/// sentence that says so and what to do; nullopt when its log shows no known problem.
std::optional<std::string> explain_failure(std::string_view log);

/// KernelAgent's reading of the SOL figures: underutilized when both are under 60% of peak,
/// otherwise bound by the busier of the two; at the roofline when the harness measured at least
/// 90% of the measured roof (`fraction_of_roof`, from workbook::analyze).
struct Verdict {
  Bound bound = Bound::underutilized;  ///< what binds, by ncu's figures
  bool at_roofline = false;            ///< the harness measured >= 90% of the roof
  std::string text;                    ///< one sentence for the student
};
/// The Verdict for SOL figures in percent (Launch::compute_pct, Launch::memory_pct) and the
/// harness's fraction of the roof (0..1).
Verdict classify(double compute_pct, double memory_pct, double fraction_of_roof);

/// The launches of one run of a case, merged: durations and bytes summed, percentages weighted
/// by duration (a case may launch several kernels per run: mean, variance, normalize).
Launch merge(const std::vector<Launch>& launches);

/// What a `labNN_perf --ncu` record (CASE.ncu.json) says of a slow kernel's memory traffic, one
/// sentence each, against the bytes its work needs: DRAM bytes (repeated reads), L2 bytes
/// (repeats the L2 served), and the use of each loaded sector (uncoalesced loads). Empty when
/// the record shows nothing beyond the work's bytes.
std::vector<std::string> traffic_notes(const std::string& record_json);

/// The path of ncu: $WORKBOOK_NCU, else the first `ncu` on the PATH, else the CUDA toolkit's.
std::optional<std::string> find_ncu();

}  // namespace workbook::cuda::ncu
