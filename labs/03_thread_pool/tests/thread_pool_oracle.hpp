#pragma once
// What lab 03's results are checked against. Shared by the correctness tests, the perf cases and
// the bench.
#include "thread_pool.hpp"
#include "thread_pool_mistakes.hpp"

#include <workbook/check.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace lab03::oracle {

inline workbook::Where where(const char* function) {
  return {function, "labs/03_thread_pool/thread_pool.cpp", workbook::Model::threads};
}

/// ReLU with PyTorch's NaN semantics: NaN in, NaN out.
inline double relu(double x) {
  return std::isnan(x) ? x : (x > 0 ? x : 0.0);
}

/// relu selects an input value or zero: the result must be exact. The checker also reports elements
/// never written (left as poison: a chunk that did not run) and writes past the end, and names the
/// chunking mistakes of thread_pool_mistakes.hpp. `run_again`, when given, poisons y and computes
/// it again from the same x: an output that changes between the two runs is reported as a race.
inline workbook::CheckResult check_relu(std::span<const float> x,
                                        const workbook::GuardedBuffer<float>& y,
                                        const char* function = "parallel_relu",
                                        std::function<void()> run_again = {}) {
  return workbook::check_elementwise(
      y, [x](std::size_t i) { return relu(x[i]); },
      {.where = where(function),
       .tolerance = workbook::Tolerance::exact(),
       .inputs = {workbook::column("x", x)},
       .mistakes = [x, &y] { return mistakes::relu_catalogue(x, y); },
       .run_again = std::move(run_again)});
}

/// op applied to each tensor in turn, on this thread: what process_batch must return.
inline std::vector<Tensor> serial(std::span<const Tensor> batch, const TensorOp& op) {
  std::vector<Tensor> results;
  results.reserve(batch.size());
  for (const Tensor& t : batch) results.push_back(op(t));
  return results;
}

/// The same bits, NaN included.
inline bool identical(const Tensor& a, const Tensor& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint32_t>(a.data()[i]) != std::bit_cast<std::uint32_t>(b.data()[i]))
      return false;
  return true;
}

/// process_batch's results against op applied serially. Exact: the same op on the same input gives
/// the same bits on any thread. On failure it says which result is wrong and why: missing, or
/// belonging to another input (the results came back out of order).
inline workbook::CheckResult check_batch(std::span<const Tensor> results,
                                         std::span<const Tensor> expected) {
  workbook::CheckResult r;
  r.edit = "edit labs/03_thread_pool/thread_pool.cpp: process_batch";
  r.checked = results.size();
  if (results.size() != expected.size()) {
    r.ok = false;
    r.summary = "process_batch: " + std::to_string(results.size()) + " results for a batch of " +
                std::to_string(expected.size()) + " tensors";
    r.diagnosis = "There must be exactly one result per input tensor, results[i] = op(batch[i]).";
    if (results.empty())
      r.diagnosis +=
          " None came back: was the vector only reserve()d? reserve() makes room but no "
          "elements, so results[i] does not exist; make it std::vector<Tensor> "
          "results(batch.size()).";
    return r;
  }
  std::size_t first_wrong = 0;
  std::string first_reason;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (identical(results[i], expected[i])) continue;
    if (r.wrong++ > 0) continue;
    first_wrong = i;
    if (results[i].size() == 0 && expected[i].size() > 0) {
      first_reason = "it is empty: was op ever called for tensor " + std::to_string(i) +
                     ", and its result stored in results[" + std::to_string(i) + "]?";
      continue;
    }
    first_reason = "it differs from op(batch[" + std::to_string(i) + "])";
    for (std::size_t j = 0; j < expected.size(); ++j) {
      if (j != i && identical(results[i], expected[j])) {
        first_reason = "it is op(batch[" + std::to_string(j) +
                       "]): the results are not in input order. " +
                       "Store each result at its input's index, not in the order the tasks finish.";
        break;
      }
    }
  }
  if (r.wrong == 0) return r;
  r.ok = false;
  r.first_wrong = first_wrong;
  r.summary = "process_batch: " + std::to_string(r.wrong) + " of " +
              std::to_string(results.size()) + " results are wrong (the first is results[" +
              std::to_string(first_wrong) + "])";
  r.diagnosis = "results[" + std::to_string(first_wrong) + "] is wrong: " + first_reason;
  // A known mistake, when every result is where that mistake puts it.
  std::vector<bool> missing(results.size());
  for (std::size_t i = 0; i < results.size(); ++i)
    missing[i] = results[i].size() == 0 && expected[i].size() > 0;
  for (const workbook::Mistake& m : mistakes::batch_catalogue(missing)) {
    bool all = true;
    for (std::size_t i = 0; i < results.size() && all; ++i) {
      const double j = m.answer(i);
      all = std::isnan(j) ? results[i].size() == 0
                          : j < static_cast<double>(expected.size()) &&
                                identical(results[i], expected[static_cast<std::size_t>(j)]);
    }
    if (!all) continue;
    r.mistake = m.what;
    r.diagnosis = "your results match " + m.what + ": " + m.advice;
    break;
  }
  return r;
}

}  // namespace lab03::oracle
