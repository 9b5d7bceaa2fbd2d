#pragma once
// The float64 answers lab 01's kernels are checked against, and the tolerances they are checked
// with, and the catalogue of mistakes each check names (vector_ops_mistakes.hpp). Shared by the
// correctness tests and the perf cases.
#include "vector_ops_mistakes.hpp"

#include <workbook/buffer.hpp>
#include <workbook/check.hpp>

#include <cmath>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace lab01::oracle {

inline workbook::Where where(const char* function) {
  return {function, "labs/01_vectorized_relu/vector_ops.cpp", workbook::Model::simd};
}

/// ReLU with PyTorch's NaN semantics: NaN in, NaN out.
inline double relu(double x) {
  return std::isnan(x) ? x : (x > 0 ? x : 0.0);
}

/// relu selects an input value or zero: the result must be exact.
/// The kernel's own mistakes, then those of any elementwise loop (mistakes::elementwise_loop).
inline std::vector<workbook::Mistake> with_loop_mistakes(std::vector<workbook::Mistake> list,
                                                         std::size_t n,
                                                         std::function<double(std::size_t)> right) {
  for (workbook::Mistake& m : mistakes::elementwise_loop(n, std::move(right)))
    list.push_back(std::move(m));
  return list;
}

/// Adds to a failed check of an elementwise output what a write past its end says about the loop.
inline workbook::CheckResult explain_overrun(workbook::CheckResult r,
                                             const workbook::GuardedBuffer<float>& out) {
  const workbook::GuardDamage d = out.damage();
  if (!r.ok && r.wrong == 0 && d.after > 0 && d.first_after == 0)
    r.diagnosis += mistakes::past_the_end(out.size(), d.after);
  return r;
}

inline workbook::CheckResult check_relu(std::span<const float> x,
                                        const workbook::GuardedBuffer<float>& y) {
  return explain_overrun(
      workbook::check_elementwise(y, [x](std::size_t i) { return relu(x[i]); },
                                  {.where = where("relu"),
                                   .tolerance = workbook::Tolerance::exact(),
                                   .inputs = {workbook::column("x", x)},
                                   .mistakes =
                                       [x] {
                                         return with_loop_mistakes(
                                             mistakes::relu(x), x.size(),
                                             [x](std::size_t i) { return relu(x[i]); });
                                       }}),
      y);
}

enum class Binary { add, multiply, squared_difference };

inline const char* name(Binary op) {
  switch (op) {
    case Binary::add:
      return "add";
    case Binary::multiply:
      return "multiply";
    case Binary::squared_difference:
      return "squared_difference";
  }
  return "?";
}

/// The exact answer, in float64: a sum or product of two floats is exact there (or within 2^-53).
inline double apply(Binary op, double a, double b) {
  switch (op) {
    case Binary::add:
      return a + b;
    case Binary::multiply:
      return a * b;
    case Binary::squared_difference:
      return (a - b) * (a - b);
  }
  return 0;
}

/// a + b and a * b round once to float32. (a - b)^2 rounds the difference, d = (a - b)(1 + e1),
/// then the square, d^2 (1 + e2) = (a - b)^2 (1 + e1)^2 (1 + e2): three factors of 1 + e.
inline workbook::Tolerance tolerance(Binary op) {
  return workbook::Tolerance::roundings(op == Binary::squared_difference ? 3 : 1);
}

inline workbook::CheckResult check_binary(Binary op, std::span<const float> a,
                                          std::span<const float> b,
                                          const workbook::GuardedBuffer<float>& out) {
  const auto right = [=](std::size_t i) { return apply(op, a[i], b[i]); };
  return explain_overrun(
      workbook::check_elementwise(
          out, right,
          {.where = where(name(op)),
           .tolerance = tolerance(op),
           .inputs = {workbook::column("a", a), workbook::column("b", b)},
           .mistakes =
               [=] {
                 std::vector<workbook::Mistake> own;
                 switch (op) {
                   case Binary::add:
                     own = mistakes::add(a, b);
                     break;
                   case Binary::multiply:
                     own = mistakes::multiply(a, b);
                     break;
                   case Binary::squared_difference:
                     own = mistakes::squared_difference(a, b);
                     break;
                 }
                 for (workbook::Mistake& m :
                      mistakes::overlapping_last_batch(a.size(), right, [=](std::size_t i) {
                        return apply(op, static_cast<float>(apply(op, a[i], b[i])), b[i]);
                      }))
                   own.push_back(std::move(m));
                 return with_loop_mistakes(std::move(own), a.size(), right);
               }}),
      out);
}

/// A float32 dot product: each product rounds once (or not at all, with FMA), then n terms are
/// summed in some order: within gamma_(n+1) * sum|a_i b_i| of the exact value.
inline workbook::ReductionOracle dot_oracle(std::span<const float> a, std::span<const float> b) {
  return {.terms = a.size(),
          .term = [=](std::size_t i) { return double(a[i]) * double(b[i]); },
          .extra_roundings = 1};
}
/// What a test saw of a reduction besides its result, from calling it more than once (see
/// workbook::ReductionOracle).
struct Seen {
  bool read_past_the_end = false;      ///< the result changed with the elements after the inputs
  bool changes_between_calls = false;  ///< two calls on the same inputs returned different results
};

/// check_dot with what the test saw of several calls.
inline workbook::CheckResult check_dot_seen(std::span<const float> a, std::span<const float> b,
                                            float got, Seen seen) {
  workbook::ReductionOracle oracle = dot_oracle(a, b);
  oracle.read_past_the_end = seen.read_past_the_end;
  oracle.changes_between_calls = seen.changes_between_calls;
  return workbook::check_reduction(got, oracle, where("dot"),
                                   [a, b] { return mistakes::dot(a, b); });
}
inline workbook::CheckResult check_dot(std::span<const float> a, std::span<const float> b,
                                       float got) {
  return check_dot_seen(a, b, got, {});
}

/// sqrt(sum (a_i - b_i)^2): the difference rounds once, its square once more (three factors of
/// 1 + delta per term), then the sum of n terms, then the square root.
inline workbook::ReductionOracle euclidean_oracle(std::span<const float> a,
                                                  std::span<const float> b) {
  return {.terms = a.size(),
          .term =
              [=](std::size_t i) {
                const double d = double(a[i]) - double(b[i]);
                return d * d;
              },
          .finish = [](double s) { return std::sqrt(std::max(s, 0.0)); },
          .extra_roundings = 3};
}
/// check_euclidean with what the test saw of several calls.
inline workbook::CheckResult check_euclidean_seen(std::span<const float> a,
                                                  std::span<const float> b, float got, Seen seen) {
  workbook::ReductionOracle oracle = euclidean_oracle(a, b);
  oracle.read_past_the_end = seen.read_past_the_end;
  oracle.changes_between_calls = seen.changes_between_calls;
  return workbook::check_reduction(got, oracle, where("euclidean_distance"),
                                   [a, b] { return mistakes::euclidean_distance(a, b); });
}
inline workbook::CheckResult check_euclidean(std::span<const float> a, std::span<const float> b,
                                             float got) {
  return check_euclidean_seen(a, b, got, {});
}

}  // namespace lab01::oracle
