#pragma once
/// \file vector_ops.hpp
/// \brief Lab 01: vectorized ReLU and vector operations, the interface you implement in
/// vector_ops.cpp. Read README.md (the handout) first.
///
/// Every function takes its inputs as read-only spans and writes an output span of the same size.
/// Mismatched sizes throw std::invalid_argument (the stub already checks them for you). An output
/// may be the very same buffer as an input (in place), but not a shifted view of it.

#include <span>

namespace lab01 {

/// y[i] = max(x[i], 0).
///
/// NaN semantics, as in PyTorch's torch.relu: a NaN input gives NaN (it propagates; it does not
/// become 0). +inf stays +inf, -inf becomes 0. The sign of a zero result is not checked.
void relu(std::span<const float> x, std::span<float> y);

/// out[i] = a[i] + b[i]
void add(std::span<const float> a, std::span<const float> b, std::span<float> out);

/// out[i] = a[i] * b[i]
void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out);

/// out[i] = (a[i] - b[i])^2
void squared_difference(std::span<const float> a, std::span<const float> b, std::span<float> out);

/// The dot product, sum of a[i] * b[i], accumulated in float32 (any order of summation).
/// An empty product is 0.
float dot(std::span<const float> a, std::span<const float> b);

/// The Euclidean distance, sqrt(sum of (a[i] - b[i])^2), accumulated in float32.
float euclidean_distance(std::span<const float> a, std::span<const float> b);

}  // namespace lab01
