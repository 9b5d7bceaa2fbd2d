#pragma once
// Lab 01's earlier versions, kept beside the reference (vector_ops.cpp) so that the bench can show
// what each step of the handout buys. Each is correct; they differ only in speed.
#include <span>

namespace lab01::versions {

// ReLU: v1 -> v2 -> v3 -> the reference (v4: streaming stores for large outputs).
void relu_v1_scalar(std::span<const float> x, std::span<float> y);  // auto-vectorisation off
void relu_v2_autovectorized(std::span<const float> x,
                            std::span<float> y);  // the same loop, vectorised by GCC
void relu_v3_xsimd(std::span<const float> x, std::span<float> y);  // xsimd batches, ordinary stores

// Dot product: v1 -> v2 -> v3 -> the reference (v4: four accumulators) -> v5, which shows that
// more accumulators than the load ports can feed buy nothing.
float dot_v1_scalar(std::span<const float> a, std::span<const float> b);  // one float at a time
float dot_v2_one_accumulator(std::span<const float> a, std::span<const float> b);
float dot_v3_two_accumulators(std::span<const float> a, std::span<const float> b);
float dot_v5_eight_accumulators(std::span<const float> a, std::span<const float> b);

}  // namespace lab01::versions
