#pragma once
/// \file simd.hpp
/// \brief What xsimd 8 lacks for memory-bound kernels: streaming (non-temporal) stores.

#include <cstddef>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#if defined(__SSE2__) || defined(__AVX__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace workbook {

/// True when `p` is aligned for a full SIMD register (of floats, or of any other element type).
inline bool simd_aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % (xsimd::batch<float>::size * sizeof(float)) == 0;
}

/// Stores a batch to `dst` (which must be simd_aligned) with a streaming store: the line goes to
/// memory without first being read into the cache (no read-for-ownership), so a kernel that writes
/// a large output moves 2 bytes per byte copied instead of 3. Worth it only when the output is far
/// larger than the caches and not read again soon. Falls back to an ordinary aligned store where
/// the instruction set has none. Call stream_fence() after the last one.
inline void store_streaming(float* dst, const xsimd::batch<float>& value) {
#if defined(__AVX512F__)
  static_assert(xsimd::batch<float>::size == 16, "xsimd's default batch is not AVX-512");
  _mm512_stream_ps(dst, value);
#elif defined(__AVX__)
  static_assert(xsimd::batch<float>::size == 8, "xsimd's default batch is not AVX");
  _mm256_stream_ps(dst, value);
#elif defined(__SSE2__)
  static_assert(xsimd::batch<float>::size == 4, "xsimd's default batch is not SSE");
  _mm_stream_ps(dst, value);
#else
  value.store_aligned(dst);
#endif
}

/// The same for a batch of bytes (int8 outputs: quantized tensors).
inline void store_streaming(std::int8_t* dst, const xsimd::batch<std::int8_t>& value) {
  static_assert(sizeof(xsimd::batch<std::int8_t>) == sizeof(xsimd::batch<float>),
                "one register either way");
#if defined(__AVX512F__)
  _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), value);
#elif defined(__AVX__)
  _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), value);
#elif defined(__SSE2__)
  _mm_stream_si128(reinterpret_cast<__m128i*>(dst), value);
#else
  value.store_aligned(dst);
#endif
}

/// Orders earlier streaming stores before any later store (they are weakly ordered).
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace workbook
