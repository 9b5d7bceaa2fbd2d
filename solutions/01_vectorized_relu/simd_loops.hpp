#pragma once
// The two loop shapes of lab 01, written once: an elementwise map and a reduction. The reference
// (vector_ops.cpp) and the numbered versions (versions.cpp) are both built from them.
#include <workbook/simd.hpp>

#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace lab01::loops {

using Batch = xsimd::batch<float>;
inline constexpr std::size_t kLanes = Batch::size;

enum class Stores {
  ordinary,   ///< the line is read into the cache, then written (read-for-ownership)
  streaming,  ///< written around the cache: saves the read when the output is large
  automatic,  ///< streaming from kStreamingBytes of output on, ordinary below
};

// From about this much output on, streaming stores win: the output would not stay in cache anyway,
// and skipping the read-for-ownership saves a third of the traffic. Below it, the output may still
// be in cache for the next kernel. (Measured on our machine; the bench prints both kinds of store.)
inline constexpr std::size_t kStreamingBytes = std::size_t{8} << 20;

// out[i] = scalar_at(i) for i < n, a batch at a time: batch_at(i) returns the results for
// elements [i, i + kLanes). Handles the unaligned start (for streaming stores) and the tail.
template <class BatchAt, class ScalarAt>
void elementwise(float* out, std::size_t n, Stores stores, BatchAt batch_at, ScalarAt scalar_at) {
  if (stores == Stores::automatic)
    stores = n * sizeof(float) >= kStreamingBytes ? Stores::streaming : Stores::ordinary;
  std::size_t i = 0;
  if (stores == Stores::streaming) {
    // A streaming store needs an aligned address: peel off elements until out + i is aligned.
    for (; i < n && !workbook::simd_aligned(out + i); ++i) out[i] = scalar_at(i);
    for (; i + kLanes <= n; i += kLanes) workbook::store_streaming(out + i, batch_at(i));
    workbook::stream_fence();
  } else {
    for (; i + kLanes <= n; i += kLanes) batch_at(i).store_unaligned(out + i);
  }
  for (; i < n; ++i) out[i] = scalar_at(i);  // the tail: fewer than kLanes elements left
}

// The sum of n terms with `Accumulators` independent batch accumulators. add_batch(acc, i) returns
// acc plus the batch of terms [i, i + kLanes) (an FMA, typically); term(i) is term i alone.
//
// Why several accumulators: each FMA needs the previous result of its accumulator, and an FMA takes
// about 4 cycles, while the core can start one or two per cycle. With one accumulator the loop runs
// at the FMA's latency; with 8 independent ones, at its throughput (or at the load ports' rate).
template <std::size_t Accumulators, class AddBatch, class Term>
float reduce(std::size_t n, AddBatch add_batch, Term term) {
  static_assert(Accumulators > 0 && (Accumulators & (Accumulators - 1)) == 0, "a power of two");
  Batch acc[Accumulators];
  for (Batch& a : acc) a = Batch(0.0f);
  constexpr std::size_t kStep = Accumulators * kLanes;
  std::size_t i = 0;
  for (; i + kStep <= n; i += kStep)
    for (std::size_t k = 0; k < Accumulators; ++k) acc[k] = add_batch(acc[k], i + k * kLanes);
  for (; i + kLanes <= n; i += kLanes) acc[0] = add_batch(acc[0], i);  // whole batches left over
  // Add the accumulators pairwise (a tree: shorter rounding chains than one after the other).
  for (std::size_t width = Accumulators / 2; width > 0; width /= 2)
    for (std::size_t k = 0; k < width; ++k) acc[k] += acc[k + width];
  float sum = xsimd::hadd(acc[0]);    // the lanes of the last accumulator
  for (; i < n; ++i) sum += term(i);  // the tail
  return sum;
}

}  // namespace lab01::loops
