#pragma once
// The work lab 03's tests and perf cases hand to process_batch: a compute-heavy operation on one
// tensor (a polynomial, evaluated with SIMD), and batches of tensors of different sizes.
#include "thread_pool.hpp"

#include <workbook/buffer.hpp>
#include <workbook/seed.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

#include <xsimd/xsimd.hpp>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lab03::ops {

/// The degree of the polynomial: kDegree fused multiply-adds, 2 kDegree FLOP, per element.
inline constexpr int kDegree = 64;
inline constexpr double kFlopsPerElement = 2.0 * kDegree;

/// Coefficients (-1)^k / (k + 1): on [-1, 1] every term is at most 1 in magnitude, so the result
/// stays small (|p| <= 1 + ln 65), with no overflow and no denormals.
inline const std::array<float, kDegree + 1>& coefficients() {
  static const std::array<float, kDegree + 1> c = [] {
    std::array<float, kDegree + 1> a{};
    for (int k = 0; k <= kDegree; ++k) a[k] = (k % 2 ? -1.0f : 1.0f) / static_cast<float>(k + 1);
    return a;
  }();
  return c;
}

/// y[i] = p(x[i]) by Horner's rule, 64 FMAs per element: 16 FLOP per byte moved, far right of any
/// machine's ridge point, so bound by the cores' FMA units, not by memory. Eight independent
/// batches at a time keep the FMA units busy despite each FMA waiting for the one before it (as
/// the accumulators of lab 01's dot product). The same input always gives the same bits.
inline Tensor polynomial(const Tensor& x) {
  using Batch = xsimd::batch<float>;
  constexpr std::size_t kChains = 8;
  constexpr std::size_t kStep = kChains * Batch::size;
  const auto& c = coefficients();
  const std::size_t n = x.size();
  Tensor y(Tensor::shape_type{n});
  const float* in = x.data();
  float* out = y.data();
  std::size_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    Batch v[kChains], acc[kChains];
    for (std::size_t k = 0; k < kChains; ++k) {
      v[k] = Batch::load_unaligned(in + i + k * Batch::size);
      acc[k] = Batch(c[kDegree]);
    }
    for (int d = kDegree - 1; d >= 0; --d) {
      const Batch coefficient(c[d]);
      for (std::size_t k = 0; k < kChains; ++k) acc[k] = xsimd::fma(acc[k], v[k], coefficient);
    }
    for (std::size_t k = 0; k < kChains; ++k) acc[k].store_unaligned(out + i + k * Batch::size);
  }
  for (; i < n; ++i) {
    float acc = c[kDegree];
    for (int d = kDegree - 1; d >= 0; --d) acc = std::fma(acc, in[i], c[d]);
    out[i] = acc;
  }
  return y;
}

/// `count` tensors with sizes drawn uniformly from [min_size, max_size], values uniform in [-1, 1).
inline std::vector<Tensor> make_batch(std::size_t count, std::size_t min_size, std::size_t max_size,
                                      workbook::Rng& rng) {
  std::vector<Tensor> batch;
  batch.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const auto n = static_cast<std::size_t>(
        rng.integer(static_cast<std::int64_t>(min_size), static_cast<std::int64_t>(max_size)));
    Tensor t(Tensor::shape_type{n});
    workbook::fill_uniform(std::span<float>(t.data(), n), rng);
    batch.push_back(std::move(t));
  }
  return batch;
}

/// Keeps memory this process frees for its own reuse, instead of giving it back to the system.
///
/// process_batch returns fresh tensors on every call. By default glibc hands large freed blocks
/// (from 128 KiB) back to the system, and the next call's tensors are then faulted in again, one
/// 4 KiB page at a time, at a microsecond or more per fault: in our virtual machine that made a
/// batch 8 times slower, and the case about page faults rather than about arithmetic. A program
/// that allocates in a loop would tune its allocator the same way (or use jemalloc or tcmalloc).
inline void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 << 20);  // blocks up to 256 MiB come from the heap, not from mmap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);    // and the heap is not trimmed below 1 GiB of free space
#endif
}

/// The number of elements in a batch.
inline std::size_t elements(std::span<const Tensor> batch) {
  std::size_t n = 0;
  for (const Tensor& t : batch) n += t.size();
  return n;
}

}  // namespace lab03::ops
