#pragma once
// Lab 99's oracle: a * x rounds once to float.
#include <workbook/check.hpp>

#include <span>

namespace lab99::oracle {

inline workbook::CheckResult check_scale(std::span<const float> x, float a,
                                         const workbook::GuardedBuffer<float>& y) {
  return workbook::check_elementwise(y, [=](std::size_t i) { return double(a) * double(x[i]); },
                                     {.where = {"scale", "labs/99_selftest/scale.cpp"},
                                      .tolerance = workbook::Tolerance::roundings(1),
                                      .inputs = {workbook::column("x", x)}});
}

}  // namespace lab99::oracle
