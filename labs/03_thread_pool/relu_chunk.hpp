#pragma once
/// \file relu_chunk.hpp
/// \brief Given: ReLU of one chunk on the calling thread, lab 01's kernel (SIMD, streaming stores
/// for large outputs). Your parallel_relu runs it on chunks of a large tensor, in parallel.

#include <workbook/simd.hpp>

#include <cstddef>
#include <span>

#include <xsimd/xsimd.hpp>

namespace lab03 {

/// How relu_chunk writes its output.
enum class Stores {
  ordinary,   ///< each cache line is read before it is written (read-for-ownership)
  streaming,  ///< written around the cache: a third less memory traffic for a large output
};

/// From this much output on, streaming stores pay off (lab 01, step 6).
inline constexpr std::size_t kStreamingBytes = std::size_t{8} << 20;

/// The kind of stores for an output of `bytes`. Decide it for the whole output, not per chunk: a
/// 1 MiB chunk of a 256 MiB output is no more likely to be read again soon than the rest of it.
inline Stores stores_for(std::size_t bytes) {
  return bytes >= kStreamingBytes ? Stores::streaming : Stores::ordinary;
}

/// y[i] = max(x[i], 0) for one chunk, on the calling thread; NaN stays NaN (as torch.relu). x and
/// y have the same size and need no alignment: with streaming stores, the elements before the
/// first aligned address of y are written one at a time.
inline void relu_chunk(std::span<const float> x, std::span<float> y, Stores stores) {
  using Batch = xsimd::batch<float>;
  const Batch zero(0.0f);
  const std::size_t n = x.size();
  const float* in = x.data();
  float* out = y.data();
  // `x <= 0` is false for NaN, so NaN keeps its value.
  auto batch_at = [&](std::size_t i) {
    const Batch v = Batch::load_unaligned(in + i);
    return xsimd::select(v <= zero, zero, v);
  };
  auto scalar_at = [&](std::size_t i) { out[i] = in[i] <= 0.0f ? 0.0f : in[i]; };
  std::size_t i = 0;
  if (stores == Stores::streaming) {
    for (; i < n && !workbook::simd_aligned(out + i); ++i)
      scalar_at(i);  // up to an aligned address
  }
  // Where the last full batch ends.
  const std::size_t whole = i + (n - i) / Batch::size * Batch::size;
  if (stores == Stores::streaming) {
    for (; i < whole; i += Batch::size) workbook::store_streaming(out + i, batch_at(i));
    // Streaming stores are weakly ordered: without the fence another thread could see this chunk
    // reported done before it sees all of its stores.
    workbook::stream_fence();
  } else {
    for (; i < whole; i += Batch::size) batch_at(i).store_unaligned(out + i);
  }
  for (; i < n; ++i) scalar_at(i);  // the tail
}

}  // namespace lab03
