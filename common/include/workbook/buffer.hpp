#pragma once
/// \file buffer.hpp
/// \brief Aligned buffers, and guarded output buffers: poisoned before a kernel runs, with canaries
/// on both sides, so that unwritten elements and out-of-bounds writes are caught.

#include <workbook/seed.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <xsimd/memory/xsimd_aligned_allocator.hpp>

namespace workbook {

/// A std::vector whose data() is aligned to 64 bytes (a cache line, an AVX-512 register).
template <class T>
using AlignedVector = std::vector<T, xsimd::aligned_allocator<T, 64>>;

/// Fills an existing buffer with uniform draws in [lo, hi): for large perf inputs, no temporaries.
void fill_uniform(std::span<float> out, Rng& rng, double lo = -1.0, double hi = 1.0);

// --- Poison and guards ---------------------------------------------------------------------------

/// The value an output holds before a kernel runs (so an element never written is recognised), and
/// the canary around it (so a write past either end is caught). For floats both are quiet NaNs with
/// payloads no arithmetic produces; for int8 the poison is -128, outside the symmetric range.
template <class T>
struct Poison;
template <>
struct Poison<float> {
  static float value() { return std::bit_cast<float>(0x7FC0DEADu); }
  static float canary() { return std::bit_cast<float>(0x7FC0CAFEu); }
  static bool is_value(float v) { return std::bit_cast<std::uint32_t>(v) == 0x7FC0DEADu; }
  static bool is_canary(float v) { return std::bit_cast<std::uint32_t>(v) == 0x7FC0CAFEu; }
};
template <>
struct Poison<double> {
  static double value() { return std::bit_cast<double>(0x7FF80000DEADDEADull); }
  static double canary() { return std::bit_cast<double>(0x7FF80000CAFECAFEull); }
  static bool is_value(double v) { return std::bit_cast<std::uint64_t>(v) == 0x7FF80000DEADDEADull; }
  static bool is_canary(double v) { return std::bit_cast<std::uint64_t>(v) == 0x7FF80000CAFECAFEull; }
};
template <>
struct Poison<std::int32_t> {
  static std::int32_t value() { return std::numeric_limits<std::int32_t>::min() + 0xDEAD; }
  static std::int32_t canary() { return std::numeric_limits<std::int32_t>::min() + 0xCAFE; }
  static bool is_value(std::int32_t v) { return v == value(); }
  static bool is_canary(std::int32_t v) { return v == canary(); }
};
template <>
struct Poison<std::int8_t> {
  static std::int8_t value() { return -128; }
  static std::int8_t canary() { return -128; }
  static bool is_value(std::int8_t v) { return v == -128; }
  static bool is_canary(std::int8_t v) { return v == -128; }
};

/// What a write outside an output buffer left behind.
struct GuardDamage {
  std::size_t before = 0;  ///< canary elements changed before the first element
  std::size_t after = 0;   ///< canary elements changed after the last element
  std::size_t first_after = 0;  ///< offset past the end of the first changed one (0 = right after)
  bool intact() const { return before == 0 && after == 0; }
};

/// An output buffer as the checks want it: n elements, poisoned before each call, between two
/// canary zones of 64 elements, optionally starting `misalign` elements past a 64-byte boundary to
/// test unaligned starts.
template <class T>
class GuardedBuffer {
 public:
  static constexpr std::size_t kGuard = 64;

  explicit GuardedBuffer(std::size_t n, std::size_t misalign = 0)
      : storage_(2 * kGuard + misalign + n, Poison<T>::canary()), offset_(kGuard + misalign), n_(n) {
    poison();
  }

  T* data() { return storage_.data() + offset_; }
  const T* data() const { return storage_.data() + offset_; }
  std::size_t size() const { return n_; }
  std::span<T> span() { return {data(), n_}; }
  std::span<const T> span() const { return {data(), n_}; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }

  /// Fills every element with Poison<T>::value() (the canaries stay).
  void poison() { std::fill(data(), data() + n_, Poison<T>::value()); }
  bool is_poison(std::size_t i) const { return Poison<T>::is_value(data()[i]); }

  /// Which canaries a kernel overwrote.
  GuardDamage damage() const {
    GuardDamage d;
    for (std::size_t i = 0; i < offset_; ++i) d.before += !Poison<T>::is_canary(storage_[i]);
    bool first = true;
    for (std::size_t i = 0; i < kGuard; ++i) {
      if (!Poison<T>::is_canary(storage_[offset_ + n_ + i])) {
        ++d.after;
        if (first) d.first_after = i;
        first = false;
      }
    }
    return d;
  }

 private:
  AlignedVector<T> storage_;
  std::size_t offset_;
  std::size_t n_;
};

}  // namespace workbook
