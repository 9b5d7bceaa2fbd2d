#pragma once
/// \file cuda/ncu.hpp
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

namespace workbook::cuda::ncu {

/// The metrics the harness asks ncu for (the SOL section's headline figures and a few more).
inline constexpr const char* kDuration = "gpu__time_duration.sum";
inline constexpr const char* kComputeSol = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kMemorySol = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramSol = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramRead = "dram__bytes_read.sum";
inline constexpr const char* kDramWrite = "dram__bytes_write.sum";
inline constexpr const char* kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kRegisters = "launch__registers_per_thread";
/// All of the above, comma-separated, for `ncu --metrics`.
std::string metric_list();

/// One profiled kernel launch.
struct Launch {
  std::string kernel;          ///< the kernel's (demangled) name
  std::string grid, block;     ///< launch configuration, as ncu prints it: "(1024, 1, 1)"
  double seconds = 0;          ///< gpu__time_duration
  double compute_pct = 0;      ///< SM throughput, % of peak ("Compute (SM) Throughput")
  double memory_pct = 0;       ///< memory throughput, % of peak ("Memory Throughput")
  double dram_pct = 0;         ///< device memory throughput, % of peak
  double dram_bytes = 0;       ///< bytes read from plus written to device memory
  double occupancy_pct = 0;    ///< achieved occupancy
  double registers = 0;        ///< registers per thread
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
  Bound bound = Bound::underutilized;
  bool at_roofline = false;
  std::string text;  ///< one sentence for the student
};
Verdict classify(double compute_pct, double memory_pct, double fraction_of_roof);

/// The launches of one run of a case, merged: durations and bytes summed, percentages weighted
/// by duration (a case may launch several kernels per run: mean, variance, normalize).
Launch merge(const std::vector<Launch>& launches);

/// The path of ncu: $WORKBOOK_NCU, else the first `ncu` on the PATH, else the CUDA toolkit's.
std::optional<std::string> find_ncu();

}  // namespace workbook::cuda::ncu
