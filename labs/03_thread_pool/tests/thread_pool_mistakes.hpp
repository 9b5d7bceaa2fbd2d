#pragma once
// The mistakes students make when they split work into chunks for the pool, each with the wrong
// output it gives. When a check of parallel_relu or process_batch fails, the output is compared
// with each one in order and the first that matches is named, with what to change (see
// workbook::Mistake). The chunk size is the student's choice, so each entry reads it off the output
// (where the first gap or the first wrong element is) and then predicts every element from it:
// only an output that follows the mistake everywhere matches.
#include "thread_pool.hpp"

#include <workbook/buffer.hpp>
#include <workbook/check.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace lab03::mistakes {

namespace detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline double relu(float x) {
  return std::isnan(x) ? x : (x > 0 ? static_cast<double>(x) : 0.0);
}

// The same float, NaN included.
inline bool same(float a, double b) {
  const float f = static_cast<float>(b);
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(f) ||
         (std::isnan(a) && std::isnan(b));
}

// y[i] for chunks of `grain` that all ran, one after the other, on the same part of the output:
// the last chunk's values where it reaches, the one before it's beyond (what a single worker
// leaves; with several, which chunk wins is a race).
inline double last_writer(std::span<const float> x, std::size_t grain, std::size_t i) {
  const std::size_t n = x.size();
  const std::size_t chunks = (n + grain - 1) / grain;
  const std::size_t last = (chunks - 1) * grain;
  if (i < n - last) return relu(x[last + i]);
  return chunks >= 2 ? relu(x[last - grain + i]) : kNaN;
}

}  // namespace detail

/// The catalogue for parallel_relu's y = relu(x), in the order it is tried. `y` is the output the
/// check looks at: the chunk size is read off it.
inline std::vector<workbook::Mistake> relu_catalogue(std::span<const float> x,
                                                     const workbook::GuardedBuffer<float>& y) {
  using detail::kNaN;
  using detail::relu;
  const std::size_t n = x.size();
  std::size_t first_unwritten = n, first_wrong = n;
  for (std::size_t i = 0; i < n && first_wrong == n; ++i)
    if (y.is_poison(i) || !detail::same(y[i], relu(x[i]))) first_wrong = i;
  for (std::size_t i = first_wrong; i < n && first_unwritten == n; ++i)
    if (y.is_poison(i)) first_unwritten = i;
  std::vector<workbook::Mistake> list;

  list.push_back({"ReLU with NaN mapped to 0 (x > 0 ? x : 0, or std::max(0.0f, x))",
                  "every comparison with NaN is false, so these give 0 for NaN; the ReLU of this "
                  "lab keeps NaN, as torch.relu does. Call relu_chunk (given) on each chunk "
                  "instead of your own loop.",
                  [x](std::size_t i) { return x[i] > 0 ? static_cast<double>(x[i]) : 0.0; }});

  // Off by one at the chunk borders: a gap of one element per chunk (two chunks at least, or a
  // tail left out would look the same).
  if (2 * (first_unwritten + 1) < n) {
    const std::size_t grain = first_unwritten + 1;
    list.push_back({"chunks of " + std::to_string(grain) +
                        " whose last element is never written (each chunk ends at end - 1)",
                    "a Range is half-open, [begin, end): end is one past the last index, so the "
                    "chunk [b, min(b + grain, n)) already stops before its end. Do not subtract "
                    "1.",
                    [x, grain, n](std::size_t i) {
                      return i % grain == grain - 1 || i == n - 1 ? kNaN : relu(x[i]);
                    }});
    list.push_back(
        {"chunks of " + std::to_string(first_unwritten) +
             " with one element skipped between each two (the next chunk starts at "
             "end + 1)",
         "a Range is half-open, [begin, end): the next chunk starts at end itself, not "
         "at end + 1, or the element at end belongs to no chunk.",
         [x, grain](std::size_t i) { return (i + 1) % grain == 0 ? kNaN : relu(x[i]); }});
  }

  // A chunk's offset forgotten on one side. Reading x from the start, every chunk repeats the
  // first: the chunk size is the first g at which y starts over with relu(x[0]), relu(x[1]), ...
  // (no later than the first wrong element).
  if (first_wrong > 0 && first_wrong < n && first_unwritten == n) {
    std::size_t grain = 0;
    for (std::size_t g = 1; g <= first_wrong && grain == 0; ++g) {
      bool repeats = true, informative = false;
      for (std::size_t t = 0; t < 32 && g + t < n && repeats; ++t) {
        repeats = detail::same(y[g + t], relu(x[t]));
        informative |= relu(x[t]) != 0;
      }
      if (repeats && informative) grain = g;
    }
    if (grain > 0)
      list.push_back({"every chunk of " + std::to_string(grain) +
                          " computed from the start of x (x.subspan(0, size))",
                      "chunk [begin, end) must read x.subspan(begin, end - begin), at the same "
                      "offset as it writes y: relu_chunk(x.subspan(r.begin, r.size()), "
                      "y.subspan(r.begin, r.size()), stores).",
                      [x, grain](std::size_t i) { return relu(x[i % grain]); }});
  }
  // Every chunk writing the start of y: the first chunk's place holds other chunks' values (when
  // it does not, this is only a tail left unwritten, which the generic diagnosis names).
  bool overwritten = false;
  for (std::size_t i = 0; i < first_unwritten && first_unwritten < n && !overwritten; ++i)
    overwritten =
        !detail::same(static_cast<float>(detail::last_writer(x, first_unwritten, i)), relu(x[i]));
  if (first_unwritten > 0 && first_unwritten < n && overwritten) {
    const std::size_t grain = first_unwritten;
    list.push_back({"every chunk of " + std::to_string(grain) +
                        " written to the start of y (y.subspan(0, size))",
                    "chunk [begin, end) must write y.subspan(begin, end - begin), at the same "
                    "offset as it reads x; all your chunks wrote over the first one, and with "
                    "several workers at once, which one wins is a race.",
                    [x, grain](std::size_t i) {
                      return i < grain ? detail::last_writer(x, grain, i) : kNaN;
                    }});
  }
  return list;
}

/// The catalogue for process_batch. Element i of a batch's "output" is the number of the input
/// whose op(batch[j]) results[i] holds, NaN for an empty result: answer(i) is that j for the
/// mistake's results. `missing[i]` says that results[i] is empty where op gives a tensor: the
/// chunk size is read off the first gap.
inline std::vector<workbook::Mistake> batch_catalogue(const std::vector<bool>& missing) {
  using detail::kNaN;
  const std::size_t n = missing.size();
  std::size_t first_missing = 0, next_present = n;
  while (first_missing < n && !missing[first_missing]) ++first_missing;
  for (std::size_t i = first_missing; i < n && next_present == n; ++i)
    if (!missing[i]) next_present = i;
  std::vector<workbook::Mistake> list;
  if (first_missing == n || first_missing == 0) return list;
  const std::size_t cut = first_missing;
  list.push_back(
      {"results for the first " + std::to_string(cut) + " of " + std::to_string(n) +
           " tensors only (the remainder after the last full share dropped)",
       "batch.size() / pool.size() rounds down, so a split into equal shares leaves out the last "
       "batch.size() % pool.size() tensors. Let parallel_for cut the chunks (the last one "
       "shorter), or end the last share at batch.size().",
       [cut](std::size_t i) { return i < cut ? static_cast<double>(i) : kNaN; }});
  if (cut == 1 && next_present < n) {
    const std::size_t grain = next_present;
    list.push_back(
        {"only the first tensor of each chunk of " + std::to_string(grain) + " processed",
         "body gets a Range of several indices: loop over all of them, for (i = "
         "r.begin; i < r.end; ++i) results[i] = op(batch[i]).",
         [grain](std::size_t i) { return i % grain == 0 ? static_cast<double>(i) : kNaN; }});
  }
  list.push_back(
      {"each chunk's results stored from results[0] (chunks of " + std::to_string(cut) + ")",
       "result i of chunk [begin, end) belongs in results[begin + i], not results[i]: "
       "the chunks overwrote each other's results, and with several workers at once, "
       "which one wins is a race.",
       [cut, n](std::size_t i) {
         const std::size_t last = (n - 1) / cut * cut;  // the last chunk's start
         if (i >= cut) return kNaN;
         return static_cast<double>(i < n - last ? last + i : last - cut + i);
       }});
  return list;
}

/// A way of cutting parallel_for's range wrong, with the chunks it makes.
struct ChunkMistake {
  std::string what;           ///< the wrong chunks, in words
  std::string advice;         ///< why they are wrong and what to change
  std::vector<Range> chunks;  ///< the chunks it makes for the range and grain, in order
};

/// The catalogue for parallel_for's chunks of `range` in chunks of `grain`, each with the exact
/// chunks it makes; a test names the one whose chunks are those seen. Only the mistakes whose
/// chunks differ from the right ones for this range are listed.
inline std::vector<ChunkMistake> chunk_catalogue(Range range, std::size_t grain) {
  // The chunks [b, e - cut) of [begin, end), where e = min(b + grain, end) (b + grain when not
  // clamped) and the next b is e + gap; `whole`: only the chunks that are grain long.
  const auto chunks = [grain](std::size_t begin, std::size_t end, bool clamp, std::size_t cut,
                              std::size_t gap, bool whole) {
    std::vector<Range> list;
    for (std::size_t b = begin; b < end && list.size() <= end - begin;) {
      const std::size_t e = clamp ? std::min(b + grain, end) : b + grain;
      if (whole && e - b < grain) break;
      list.push_back({b, e - std::min(cut, e - b)});
      b = e + gap;
    }
    return list;
  };
  const std::size_t size = range.size();
  const std::vector<Range> right = chunks(range.begin, range.end, true, 0, 0, false);
  std::vector<ChunkMistake> list;
  const auto add = [&](std::string what, std::string advice, std::vector<Range> wrong) {
    if (wrong != right) list.push_back({std::move(what), std::move(advice), std::move(wrong)});
  };
  if (range.begin != 0) {
    const std::string advice =
        "the chunks must cover [range.begin, range.end): start the loop at range.begin, not at 0 "
        "(a range that starts at 0, as parallel_relu's does, hides this)";
    add("chunks counted from 0 instead of from range.begin (over [0, range.size()))", advice,
        chunks(0, size, true, 0, 0, false));
    add("chunks counted from 0 instead of from range.begin (over [0, range.end))", advice,
        chunks(0, range.end, true, 0, 0, false));
  }
  add("chunks whose last one runs past range.end (its end not cut at range.end)",
      "the last chunk is shorter when grain does not divide the range: end it at min(begin + "
      "grain, range.end), or it runs indices that do not exist (past the end of the caller's "
      "data)",
      chunks(range.begin, range.end, false, 0, 0, false));
  add("whole chunks only: the last, shorter chunk is left out (range.size() / grain rounds down)",
      "when grain does not divide the range, the remainder needs a chunk of its own: "
      "(range.size() + grain - 1) / grain chunks, the last one ending at range.end",
      chunks(range.begin, range.end, true, 0, 0, true));
  {
    // A chunk count written (size + grain) / grain: a ceiling only where grain does not divide
    // the size; where it does, one chunk more, empty, at range.end (and for an empty range too).
    std::vector<Range> extra = right;
    if (size % grain == 0) extra.push_back({range.end, range.end});
    add("one chunk more when grain divides the range: (range.size() + grain) / grain chunks, the "
        "last one empty, [range.end, range.end)",
        "the number of chunks is a ceiling, (range.size() + grain - 1) / grain: (range.size() + "
        "grain) / grain is one more whenever grain divides the size, and body gets a chunk that "
        "starts at range.end",
        extra);
  }
  add("chunks that each end one index early (end - 1)",
      "a Range is half-open, [begin, end): end is one past the last index, so the chunk [b, "
      "min(b + grain, range.end)) already stops before its end. Do not subtract 1.",
      chunks(range.begin, range.end, true, 1, 0, false));
  add("chunks with one index skipped between each two (the next chunk starts at end + 1)",
      "a Range is half-open, [begin, end): the next chunk starts at end itself, not at end + 1, "
      "or the index at end belongs to no chunk.",
      chunks(range.begin, range.end, true, 0, 1, false));
  return list;
}

}  // namespace lab03::mistakes
