#pragma once
/// \file cuda/ceilings.hpp
/// \brief The GPU's ceilings, measured on the GPU: device-memory copy, read and triad bandwidth, a
/// copy that stays in the L2 cache, and the fp32 FMA peak, all over the whole device.
///
/// They are a workbook::Ceilings with its `device` field set, so the roofline arithmetic, the
/// reports and the SVG plot of the CPU labs serve the GPU labs unchanged. Cached per GPU in the
/// build tree (workbook-gpu-ceilings.json); `workbook-gpu-probe --remeasure` measures again.

#include <workbook/ceilings.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace workbook::cuda {

/// Measures every ceiling on the current device (about a second). Throws workbook::Skipped when
/// there is no GPU.
Ceilings measure_ceilings(const Progress& progress = {});

/// The ceilings cached at `path`, if the file exists, has the current format and was measured on
/// this GPU (same DeviceInfo::fingerprint()).
std::optional<Ceilings> load_ceilings(const std::string& path);

/// load_ceilings(path), or measure and save when missing, stale, or when `remeasure` is set.
Ceilings load_or_measure_ceilings(const std::string& path, bool remeasure,
                                  const Progress& progress = {});

/// The cache path the GPU tests use: $WORKBOOK_GPU_CEILINGS, else ./workbook-gpu-ceilings.json.
std::string default_ceilings_path();

/// The kernel behind the copy ceiling, for a bench to time beside its own kernels: y = x with
/// 16-byte loads and stores over a grid that covers the array (x and y from cudaMalloc; n any
/// size).
void copy(const float* x, float* y, std::size_t n);

}  // namespace workbook::cuda
