#pragma once
/// \file buffer.hpp
/// \brief Aligned buffers, and guarded output buffers: poisoned before a kernel runs, with canaries
/// on both sides, so that unwritten elements and out-of-bounds writes are caught.

#include <workbook/live_buffers.hpp>
#include <workbook/seed.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
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
/// float32: quiet NaNs with payloads DEAD and CAFE. Compared by bits, since NaN != NaN, and a
/// kernel's own NaN (propagated from an input) carries another payload.
template <>
struct Poison<float> {
  /// The poison: bits 0x7FC0DEAD.
  static float value() { return std::bit_cast<float>(0x7FC0DEADu); }
  /// The canary: bits 0x7FC0CAFE.
  static float canary() { return std::bit_cast<float>(0x7FC0CAFEu); }
  /// True when `v` is still the poison (by bits): the element was never written.
  static bool is_value(float v) { return std::bit_cast<std::uint32_t>(v) == 0x7FC0DEADu; }
  /// True when `v` is still the canary (by bits): nothing was written there.
  static bool is_canary(float v) { return std::bit_cast<std::uint32_t>(v) == 0x7FC0CAFEu; }
};
/// float64 outputs: the same idea, quiet NaNs with DEAD and CAFE payloads.
template <>
struct Poison<double> {
  /// The poison: bits 0x7FF80000DEADDEAD.
  static double value() { return std::bit_cast<double>(0x7FF80000DEADDEADull); }
  /// The canary: bits 0x7FF80000CAFECAFE.
  static double canary() { return std::bit_cast<double>(0x7FF80000CAFECAFEull); }
  /// True when `v` is still the poison (by bits).
  static bool is_value(double v) {
    return std::bit_cast<std::uint64_t>(v) == 0x7FF80000DEADDEADull;
  }
  /// True when `v` is still the canary (by bits).
  static bool is_canary(double v) {
    return std::bit_cast<std::uint64_t>(v) == 0x7FF80000CAFECAFEull;
  }
};
/// int32 (sums of int8 products): values near INT32_MIN, far beyond what such sums reach at the
/// labs' sizes. Every int32 is a possible result, so a poison can be unlikely, not impossible.
template <>
struct Poison<std::int32_t> {
  /// The poison: INT32_MIN + 0xDEAD.
  static std::int32_t value() { return std::numeric_limits<std::int32_t>::min() + 0xDEAD; }
  /// The canary: INT32_MIN + 0xCAFE.
  static std::int32_t canary() { return std::numeric_limits<std::int32_t>::min() + 0xCAFE; }
  static bool is_value(std::int32_t v) { return v == value(); }    ///< still the poison
  static bool is_canary(std::int32_t v) { return v == canary(); }  ///< still the canary
};
/// int8 (quantized tensors): -128 for both, since symmetric quantization writes only [-127, 127].
/// A check cannot tell an unwritten element from an out-of-range one, and need not: both are wrong.
template <>
struct Poison<std::int8_t> {
  static std::int8_t value() { return -128; }                 ///< -128, outside [-127, 127]
  static std::int8_t canary() { return -128; }                ///< -128 as well
  static bool is_value(std::int8_t v) { return v == -128; }   ///< still -128
  static bool is_canary(std::int8_t v) { return v == -128; }  ///< still -128
};

/// The elements of T in the plural, as a crash report names them ("1000 floats").
template <class T>
constexpr const char* elements_named() {
  if constexpr (std::is_same_v<T, float>) return "floats";
  if constexpr (std::is_same_v<T, double>) return "doubles";
  if constexpr (std::is_same_v<T, std::int8_t>) return "int8 values";
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32 values";
  return "elements";
}

/// What a write outside an output buffer left behind.
struct GuardDamage {
  std::size_t before = 0;       ///< canary elements changed before the first element
  std::size_t after = 0;        ///< canary elements changed after the last element
  std::size_t first_after = 0;  ///< offset past the end of the first changed one (0 = right after)
  /// True when both canary zones are as they were: the kernel wrote only inside the buffer.
  bool intact() const { return before == 0 && after == 0; }
};

/// An output buffer as the checks want it: n elements, poisoned before each call, between two
/// canary zones of 64 elements, optionally starting `misalign` elements past a 64-byte boundary to
/// test unaligned starts. While it lives it is in the registry of live buffers (live_buffers.hpp),
/// so that a crash report can place a fault address against it and its guard zones.
template <class T>
class GuardedBuffer {
 public:
  /// Canary elements on each side: at least one whole SIMD register of any element type (16 floats
  /// or 64 int8 with AVX-512), so that a last batch stored past the end lands in the canaries.
  static constexpr std::size_t kGuard = 64;

  /// n elements, poisoned, starting `misalign` elements past a 64-byte boundary.
  /// Throws std::bad_alloc when the memory is not there.
  explicit GuardedBuffer(std::size_t n, std::size_t misalign = 0)
      : storage_(2 * kGuard + misalign + n, Poison<T>::canary()),
        offset_(kGuard + misalign),
        n_(n),
        entry_(watch()) {
    poison();
  }
  /// A copy, registered on its own.
  GuardedBuffer(const GuardedBuffer& other)
      : storage_(other.storage_), offset_(other.offset_), n_(other.n_), entry_(watch()) {}
  /// Copies `other`'s elements and guards; this buffer's registration follows its new storage.
  GuardedBuffer& operator=(const GuardedBuffer& other) {
    if (this != &other) {
      storage_ = other.storage_;
      offset_ = other.offset_;
      n_ = other.n_;
      entry_ = watch();
    }
    return *this;
  }
  /// Moves keep the storage, and with it the registration.
  GuardedBuffer(GuardedBuffer&&) noexcept = default;
  /// Moves keep the storage, and with it the registration.
  GuardedBuffer& operator=(GuardedBuffer&&) noexcept = default;
  ~GuardedBuffer() = default;

  /// Element 0, right after the front canaries.
  T* data() { return storage_.data() + offset_; }
  /// Element 0, read-only.
  const T* data() const { return storage_.data() + offset_; }
  /// How many elements a kernel may write (n).
  std::size_t size() const { return n_; }
  /// The n elements, as kernels take them.
  std::span<T> span() { return {data(), n_}; }
  /// The n elements, read-only.
  std::span<const T> span() const { return {data(), n_}; }
  /// Element i, unchecked (i < size()).
  T& operator[](std::size_t i) { return data()[i]; }
  /// Element i, read-only, unchecked.
  const T& operator[](std::size_t i) const { return data()[i]; }

  /// Fills every element with Poison<T>::value() (the canaries stay).
  void poison() { std::fill(data(), data() + n_, Poison<T>::value()); }
  /// True when element i still holds the poison: the kernel never wrote it.
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
  LiveBufferEntry watch() const {
    return LiveBufferEntry({reinterpret_cast<std::uintptr_t>(storage_.data()), offset_ * sizeof(T),
                            n_ * sizeof(T), kGuard * sizeof(T), sizeof(T), elements_named<T>(),
                            "output"});
  }

  AlignedVector<T> storage_;
  std::size_t offset_;
  std::size_t n_;
  LiveBufferEntry entry_;
};

}  // namespace workbook
