#pragma once
/// \file scale.hpp
/// \brief Lab 99 (the autograder's self-test lab): y = a * x.

#include <span>

namespace lab99 {

/// y[i] = a * x[i]; sizes must match (std::invalid_argument otherwise).
void scale(std::span<const float> x, float a, std::span<float> y);

}  // namespace lab99
