#pragma once
// The vectorised quantization loop, written once for the reference (quantize.cpp) and the version
// that converts with xsimd alone (versions.cpp), which differ only in how lanes become bytes.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

#include <workbook/simd.hpp>

#include <xsimd/xsimd.hpp>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace lab04::loops {

using FloatBatch = xsimd::batch<float>;
inline constexpr std::size_t kLanes = FloatBatch::size;

// How float lanes and bytes are converted into each other.
enum class Conversions {
  xsimd,   ///< xsimd 8.1's converting load and store: one element at a time, through a buffer
  native,  ///< with AVX-512, one instruction each way (vpmovsxbd, vpmovdb); else as xsimd
};

// 16 bytes (with AVX-512; kLanes in general) widened to floats.
template <Conversions How>
FloatBatch load_bytes(const std::int8_t* q) {
#if defined(__AVX512F__)
  if constexpr (How == Conversions::native)
    return _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))));
#endif
  return FloatBatch::load_unaligned(q);
}

// From this much output on, streaming stores win (as in lab 01): the output would not stay in the
// cache anyway, and writing around it saves reading each line first (the read-for-ownership).
inline constexpr std::size_t kStreamingBytes = std::size_t{8} << 20;

// Can store_bytes stream? Only with its AVX-512 conversion, which makes 16 bytes: an xmm register.
template <Conversions How>
inline constexpr bool kStreamsBytes =
#if defined(__AVX512F__)
    How == Conversions::native;
#else
    false;
#endif

// Lanes holding integers in [-127, 127] stored as bytes; streamed (to a 16-byte aligned q) when
// `stream` is set and kStreamsBytes<How>.
template <Conversions How>
void store_bytes(std::int8_t* q, FloatBatch integral, bool stream = false) {
#if defined(__AVX512F__)
  if constexpr (How == Conversions::native) {
    const __m128i bytes = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(integral));
    if (stream)
      _mm_stream_si128(reinterpret_cast<__m128i*>(q), bytes);
    else
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q), bytes);
    return;
  }
#endif
  static_cast<void>(stream);
  // NaN lanes (the call is about to throw) become 0: converting a NaN to an integer is undefined.
  xsimd::select(xsimd::isnan(integral), FloatBatch(0.0f), integral).store_unaligned(q);
}

// Throws std::invalid_argument for the first value of x that is NaN (or, with infinities_too,
// infinite), found by a scalar pass once the vectorised one has seen one: errors are rare. Its
// index is reported as offset + i (the position in the caller's tensor).
[[noreturn]] inline void reject(const char* function, std::span<const float> x, bool infinities_too,
                                std::size_t offset) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isnan(x[i]) && !(infinities_too && std::isinf(x[i]))) continue;
    throw std::invalid_argument(
        std::string(function) + ": x[" + std::to_string(offset + i) + "] is " +
        (std::isnan(x[i])
             ? "NaN, which has no quantized value"
             : std::string(x[i] > 0 ? "inf" : "-inf") + ", which has no finite scale"));
  }
  throw std::logic_error(std::string(function) + ": reject() found no bad value");
}

// The largest |x_i| of the values it is given, batch by batch or one by one, and whether they were
// all finite: the scan behind a symmetric scale.
class Scan {
 public:
  void add(FloatBatch v) {
    const FloatBatch magnitude = xsimd::abs(v);
    largest_ = xsimd::max(largest_, magnitude);
    bad_ = bad_ || !(magnitude <= FloatBatch(kFinite));  // true for +-inf, and for NaN
  }
  void add(float v) {
    largest_one_ = std::max(largest_one_, std::fabs(v));
    bad_one_ = bad_one_ || !(std::fabs(v) <= kFinite);
  }
  void add(const Scan& other) {
    largest_ = xsimd::max(largest_, other.largest_);
    bad_ = bad_ || other.bad_;
    add(other.largest_one_);
    bad_one_ = bad_one_ || other.bad_one_;
  }
  float largest() const {
    // xsimd 8.1 has a horizontal sum (hadd) but no horizontal max: through memory, once per call.
    alignas(64) float lanes[kLanes];
    largest_.store_aligned(lanes);
    return std::max(*std::max_element(lanes, lanes + kLanes), largest_one_);
  }
  bool finite() const { return !xsimd::any(bad_) && !bad_one_; }

 private:
  static constexpr float kFinite = std::numeric_limits<float>::max();
  FloatBatch largest_ = FloatBatch(0.0f);
  xsimd::batch_bool<float> bad_ = xsimd::batch_bool<float>(false);
  float largest_one_ = 0;
  bool bad_one_ = false;
};

// q[i] = clamp(round_half_to_even(x[i] / scale), -127, 127) for every i; throws on NaN (after the
// loop: one test per batch, no branch per element). `large` says whether the whole output the
// caller writes (maybe in several calls, one per row) is past kStreamingBytes: then it streams, and
// the caller calls workbook::stream_fence() once after its last call (a fence per row would wait
// for every row's stores to drain).
//
// On the side, it scans `next` (empty, or as long as x: the next row of a matrix) into `scan`: that
// row streams in from memory while this one, already in the cache, is divided and rounded.
template <Conversions How>
void quantize(std::span<const float> x, float scale, std::int8_t* q, bool large,
              const char* function, std::size_t offset, std::span<const float> next = {},
              Scan* scan = nullptr) {
  bool nan = false;
  auto one = [&](std::size_t i) {  // the scalar form, for the elements around the batches
    if (std::isnan(x[i])) {
      nan = true;
      return;
    }
    q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(x[i] / scale), -127.0f, 127.0f));
  };
  const FloatBatch divisor(scale), lo(-127.0f), hi(127.0f);
  auto nan_lanes = xsimd::batch_bool<float>(false);
  const bool stream = kStreamsBytes<How> && large;
  std::size_t i = 0;
  if (stream)  // a streaming store needs an aligned address: the first few bytes one at a time
    for (; i < x.size() && reinterpret_cast<std::uintptr_t>(q + i) % 16 != 0; ++i) one(i);
  // A local copy: stores through q (bytes) may alias anything, so the compiler would otherwise
  // write *scan back to memory at every store.
  const bool scanning = scan != nullptr && !next.empty();
  Scan local;
  const std::size_t first_batch = i;
  for (; i + kLanes <= x.size(); i += kLanes) {
    if (scanning) local.add(FloatBatch::load_unaligned(&next[i]));
    const FloatBatch v = FloatBatch::load_unaligned(&x[i]);
    // Not v != v: xsimd 8.1 compares "ordered", false for NaN.
    nan_lanes = nan_lanes || xsimd::isnan(v);
    // Clamping, then rounding, is the same as rounding, then clamping (the bounds are integers),
    // and it keeps huge values and infinities away from the integer conversion, which has no answer
    // for them. xsimd::nearbyint rounds half to even, as std::nearbyint does.
    store_bytes<How>(q + i, xsimd::nearbyint(xsimd::clip(v / divisor, lo, hi)), stream);
  }
  for (std::size_t k = i; k < x.size(); ++k) one(k);
  if (scanning) {  // the elements of `next` outside the batches: the peeled head and the tail
    for (std::size_t k = 0; k < first_batch; ++k) local.add(next[k]);
    for (std::size_t k = i; k < next.size(); ++k) local.add(next[k]);
    scan->add(local);
  }
  if (nan || xsimd::any(nan_lanes)) reject(function, x, false, offset);
}

// out[i] = batch_at(i) for each whole batch of `Batch::size` elements from i on, and
// out[i] = scalar_at(i) for the elements around them; streamed past kStreamingBytes of output.
template <class Batch, class T, class BatchAt, class ScalarAt>
void elementwise(T* out, std::size_t n, BatchAt batch_at, ScalarAt scalar_at) {
  std::size_t i = 0;
  if (n * sizeof(T) >= kStreamingBytes) {
    for (; i < n && !workbook::simd_aligned(out + i); ++i) out[i] = scalar_at(i);
    for (; i + Batch::size <= n; i += Batch::size) workbook::store_streaming(out + i, batch_at(i));
    workbook::stream_fence();
  } else {
    for (; i + Batch::size <= n; i += Batch::size) batch_at(i).store_unaligned(out + i);
  }
  for (; i < n; ++i) out[i] = scalar_at(i);
}

}  // namespace lab04::loops
