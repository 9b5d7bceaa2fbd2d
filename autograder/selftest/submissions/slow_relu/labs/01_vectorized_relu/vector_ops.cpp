// Self-test submission: relu is right but sleeps 30 s in every call, under the blanket 60 s limits
// of a test and of a call; the other functions are right (plain loops). The grader must bound the
// grade: relu's hidden calls meet a deadline derived from the reference's time and fail in about a
// second each, relu earns nothing, the others are graded in full, nothing is flagged as forged or
// as the grader's error, and the grade ends long before the lab's budget.
#include "vector_ops.hpp"

#include <workbook/require.hpp>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <thread>

namespace lab01 {

void relu(std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("relu", x, "x", y, "y");
  std::this_thread::sleep_for(std::chrono::seconds(30));
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::isnan(x[i]) || x[i] > 0 ? x[i] : 0.0f;
}

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("add", a, "a", out, "out");
  workbook::require_elementwise("add", b, "b", out, "out");
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
}

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("multiply", a, "a", out, "out");
  workbook::require_elementwise("multiply", b, "b", out, "out");
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] * b[i];
}

void squared_difference(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  workbook::require_elementwise("squared_difference", a, "a", out, "out");
  workbook::require_elementwise("squared_difference", b, "b", out, "out");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float d = a[i] - b[i];
    out[i] = d * d;
  }
}

float dot(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("dot", a.size(), "a", b.size(), "b");
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += double{a[i]} * double{b[i]};
  return static_cast<float>(sum);
}

float euclidean_distance(std::span<const float> a, std::span<const float> b) {
  workbook::require_same_size("euclidean_distance", a.size(), "a", b.size(), "b");
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = double{a[i]} - double{b[i]};
    sum += d * d;
  }
  return static_cast<float>(std::sqrt(sum));
}

}  // namespace lab01
