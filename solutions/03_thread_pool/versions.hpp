#pragma once
// Lab 03's earlier versions, kept beside the reference (thread_pool.cpp) so that the bench can show
// what each step buys. Each is correct, with the same guarantees as the reference; they differ in
// speed only.
#include "relu_chunk.hpp"
#include "thread_pool.hpp"

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace lab03::versions {

// parallel_for: v1 -> v2 -> the reference (v3, lab03::parallel_for: one task per worker, chunks
// claimed from an atomic counter).

/// v1, no pool: `threads` new std::jthreads for every call, thread t running chunks t, t + threads,
/// ... Starting and joining threads costs tens of microseconds per call.
void parallel_for_v1_threads(unsigned threads, Range range, std::size_t grain,
                             const std::function<void(Range)>& body);

/// v2, the handout's step 2: one pool task, and one future, per chunk. Each chunk pays a trip
/// through the pool's queue: a lock, a push and a pop, a wake-up, a future.
void parallel_for_v2_task_per_chunk(ThreadPool& pool, Range range, std::size_t grain,
                                    const std::function<void(Range)>& body);

/// process_batch on v2: one task per tensor.
std::vector<Tensor> process_batch_v2_task_per_tensor(ThreadPool& pool,
                                                     std::span<const Tensor> batch,
                                                     const TensorOp& op);

/// ReLU on v1: `threads` new threads per call, each with one contiguous share, streaming stores.
void parallel_relu_v1_threads(unsigned threads, std::span<const float> x, std::span<float> y);

/// ReLU on the reference parallel_for with a chosen grain and kind of stores: the bench's sweep.
void parallel_relu_with(ThreadPool& pool, std::span<const float> x, std::span<float> y,
                        std::size_t grain, Stores stores);

}  // namespace lab03::versions
