#pragma once
// Lab 01's perf hints, phrased from evidence about the submission (perf_cases.cpp measures it,
// beside loops of known shape on the same inputs): a kernel is told what its own timings show,
// never what it is assumed to do. A streaming kernel no faster than a scalar loop in L1 is told
// to vectorise; a vectorised one no faster from memory than ordinary stores, to stream its stores
// (and, when it is also slow in L1, that it streams there instead: the choice the wrong way round);
// one a little faster, that not all its stores stream; one faster than that is not told either;
// one far slower, that something waits at every store. A
// reduction no faster than a scalar sum is told to vectorise; one as fast as a single accumulator,
// to keep several; one faster, neither.
#include <cstddef>
#include <cstdio>
#include <string>

namespace lab01::hints {

/// "2.15", "37": a speed for a hint.
inline std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v < 10 ? "%.2f" : "%.0f", v);
  return text;
}

/// A loop at 1.5 times a scalar loop's speed or more, in L1, is vectorised (a batch loop gains 4x
/// or more there; 1.5x leaves room for a loaded machine, and for streaming stores on data that
/// lives in L1, which slow a batch loop there).
inline bool vectorised(double per_ns, double scalar_per_ns) {
  return per_ns >= 1.5 * scalar_per_ns;
}

/// The advice for a streaming elementwise kernel under 85% of its bandwidth roof: its elements
/// per ns on n_l1 floats in L1 beside a scalar loop's; when vectorised, its GB/s from memory
/// beside a vectorised loop's with ordinary stores (unused otherwise).
inline std::string streaming(const std::string& function, std::size_t n_l1, double per_ns,
                             double scalar_per_ns, double gbs, double ordinary_gbs) {
  const std::string in_l1 = "On " + std::to_string(n_l1) + " floats in L1 your " + function +
                            " does " + num(per_ns) + " elements per ns, a scalar loop timed " +
                            "beside it " + num(scalar_per_ns);
  if (!vectorised(per_ns, scalar_per_ns))
    return in_l1 +
           ": about as fast, so the loop works one element at a time (not vectorised, or a call "
           "or a branch per element). Load and store whole batches (Batch::load_unaligned, "
           "store_unaligned) and keep the scalar loop for the tail only.";
  const std::string from_memory =
      in_l1 + " (vectorised: " + num(per_ns / scalar_per_ns) + "x). From memory it moves " +
      num(gbs) + " GB/s, a vectorised loop with ordinary stores " + num(ordinary_gbs) + " GB/s";
  // Slow in L1 for a vectorised loop (ordinary stores make it 4x a scalar loop there, or more) and
  // not streaming from memory: the stores bypass the cache where the data lives in it, and not
  // where it does not.
  const bool slow_in_l1 = per_ns < 3 * scalar_per_ns;
  if (gbs < 1.1 * ordinary_gbs && slow_in_l1)
    return from_memory +
           ": no faster, so from memory its stores do not stream; yet in L1 it gains only " +
           num(per_ns / scalar_per_ns) +
           "x over a scalar loop, where a vectorised loop with ordinary stores gains 4x or more "
           "(its batch width): there its stores write around the cache the data lives in. Your "
           "choice "
           "between streaming and ordinary stores is the wrong way round: stream only an output "
           "larger than the last-level cache, and store ordinarily below that.";
  // Far slower than ordinary stores (not "no faster", which is within the noise of a loaded
  // machine): something each store waits for.
  if (gbs < 0.5 * ordinary_gbs)
    return from_memory + ": " + num(ordinary_gbs / gbs) +
           "x slower than ordinary stores, where streaming stores would be faster and a missing "
           "one would be as fast. Something in your loop makes each store (or batch) wait: a "
           "fence after every streaming store (workbook::stream_fence belongs once, after the "
           "loop), an atomic or a call per batch, or a loop that streams to one line over and "
           "over. Find what runs once per batch in your loop that a copy would not need.";
  if (gbs < 1.1 * ordinary_gbs)
    return from_memory +
           ": no faster, so each store still reads its cache line from memory first "
           "(read-for-ownership), a third more traffic than the bytes counted. Streaming stores "
           "(workbook::store_streaming, on an aligned output address) write around the cache; "
           "compare the probe's two copy figures. If your loop has streaming stores already, "
           "they are not taken at this size: check the condition that chooses them.";
  // Streaming every store saves the read of each output line: up to 1.5x on a copy.
  if (gbs < 1.35 * ordinary_gbs)
    return from_memory + ": a little faster (" + num(gbs / ordinary_gbs) +
           "x), less than streaming stores gain when every store streams, so not every store of "
           "this size does, or not throughout. Check which outputs take your streaming path (a "
           "size threshold the wrong way round, an alignment condition that is never met, a "
           "fence after every store), then time it against the probe's copy figures.";
  return from_memory +
         ": faster, so it writes around the cache already. What is left is the stream itself: "
         "one pass in order, streaming stores from the first aligned address on (the elements "
         "before it one by one), one fence at the end and not one per store, and nothing else "
         "running on the machine (see the probe's copy figure).";
}

/// The advice for a reduction of n floats in L1 under 85% of its roof: its elements per ns beside
/// a scalar sum's and a vectorised sum's with one accumulator, on the same inputs. (The two loops
/// sum products; a Euclidean distance adds a subtraction per element, so its ratios to them are,
/// if anything, lower.)
inline std::string reduction(const std::string& function, std::size_t n, double per_ns,
                             double scalar_per_ns, double one_accumulator_per_ns) {
  const std::string measured =
      "On these " + std::to_string(n) + " floats your " + function + " does " + num(per_ns) +
      " elements per ns; beside it, a scalar " + "loop does " + num(scalar_per_ns) +
      " and a vectorised loop with one accumulator " + num(one_accumulator_per_ns);
  if (!vectorised(per_ns, scalar_per_ns))
    return measured +
           ": yours is about as fast as the scalar loop, so it adds one element at a time (a "
           "float32 sum in order is never vectorised by the compiler). Use xsimd::fma on whole "
           "batches.";
  // Vectorised, yet well behind a chain that waits on every FMA: something else costs each batch.
  if (per_ns < 0.7 * one_accumulator_per_ns)
    return measured + ": yours handles whole batches, yet is " +
           num(one_accumulator_per_ns / per_ns) +
           " times slower than one accumulator, which waits for every FMA: each batch costs more "
           "than its FMA. Look for what the loop adds per batch: a call the compiler cannot "
           "inline (a std::function, a function pointer, a virtual call), which also sends the "
           "accumulators through memory, or a copy or conversion. Pass the step as a template "
           "parameter or an auto lambda, so that it inlines.";
  if (per_ns < 1.3 * one_accumulator_per_ns)
    return measured +
           ": yours is about as fast as one accumulator, whose every FMA waits for the previous "
           "one (4 cycles or so) while the core could start one per cycle. Keep 4 independent "
           "accumulators and add them together at the end.";
  return measured +
         ": yours is faster than both, so it keeps several FMAs in flight already. What is left "
         "is the loop around them: two loads per FMA is the L1's limit, so check that each "
         "element is loaded once, and that the lanes are reduced once, after the loop.";
}

}  // namespace lab01::hints
