#pragma once
/// \file internal/ceilings_json.hpp
/// \brief The one conversion of the ceilings (workbook::Ceilings, MachineInfo) to and from JSON:
/// the cache file (Ceilings::to_json adds its format and the machine's fingerprint) and the perf
/// verdict's record both use it.

#include <workbook/ceilings.hpp>

#include <nlohmann/json.hpp>

namespace workbook {

// The cache's fields, one key per member (the keys are the members' names).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MachineInfo, cpu_model, logical_cpus, simd, simd_bytes,
                                   l1d_bytes, l2_bytes, l3_bytes, hostname, compiler)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Ceilings, machine, measured_at, threads, copy_1t_gbs,
                                   copy_regular_1t_gbs, copy_streaming_1t_gbs, copy_all_gbs,
                                   triad_1t_gbs, triad_all_gbs, read_1t_gbs, read_all_gbs,
                                   l1_read_1t_gbs, fma_1t_gflops, fma_all_gflops, int8_dot_1t_gops,
                                   int8_dot_all_gops, int8_dot_instruction, cache_knee_bytes,
                                   device)

}  // namespace workbook
