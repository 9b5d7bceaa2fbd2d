#pragma once
/// \file versions.hpp
/// \brief Lab 06's numbered versions of normalize, from eager PyTorch's three kernels to the
/// reference, side by side for the bench (device pointers, contiguous rows, asynchronous).

#include <cstddef>

namespace lab06::versions {

/// v1: three kernels, as eager PyTorch runs the formula: row means, then 1 / sqrt(var + eps) per
/// row (from x and the means), then an elementwise kernel. x is read three times.
void normalize_v1_three_kernels(const float* x, float* y, std::size_t rows, std::size_t cols,
                                float eps);
/// v2: one block per row, fused; each statistic a shared-memory tree reduction with a barrier per
/// level; x read three times by the block (mean, variance, normalize), mostly from the caches.
void normalize_v2_fused_shared(const float* x, float* y, std::size_t rows, std::size_t cols,
                               float eps);
/// v3: v2 with warp-shuffle reductions: two barriers per statistic instead of nine.
void normalize_v3_warp_shuffles(const float* x, float* y, std::size_t rows, std::size_t cols,
                                float eps);
/// v4: single-pass Welford statistics, then the normalize pass: x read twice.
void normalize_v4_welford(const float* x, float* y, std::size_t rows, std::size_t cols, float eps);
/// The formula Welford replaces: var = mean(x^2) - mean(x)^2 from one pass of sums. Fast, and
/// wrong for rows far from zero (the tests show it); not a step to keep.
void normalize_sum_of_squares(const float* x, float* y, std::size_t rows, std::size_t cols,
                              float eps);
/// v5, the reference (lab06::normalize): float4 loads, the row in registers, x read once.
void normalize_v5_registers(const float* x, float* y, std::size_t rows, std::size_t cols,
                            float eps);

}  // namespace lab06::versions
