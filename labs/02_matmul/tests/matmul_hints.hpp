#pragma once
// Lab 02's perf hint, phrased from evidence about the submission (perf_cases.cpp measures it): a
// kernel is told what its own timings show, never what it is assumed to do. A kernel slower than
// the plain i-k-j loop in cache is told about its innermost loop; one as fast as i-k-j, about
// register blocking; one faster in cache but slow at the case's size, that its blocks thrash or it
// repeats packing;
// one fast at both, about its micro-kernel.
#include <cstddef>
#include <cstdio>
#include <string>

namespace lab02::hints {

/// The size of the in-cache product: 3 x 64 KiB, so that A, B and C stay in the L2 cache.
inline constexpr std::size_t kInCache = 128;
/// In cache, a kernel faster than this many times the plain i-k-j loop is past it (register
/// blocked): only then is it timed at the case's size (a naive kernel would take seconds a call).
inline constexpr double kPastIkj = 1.6;

/// "2.15", "37": a speed for a hint.
inline std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v < 10 ? "%.2f" : "%.0f", v);
  return text;
}

/// The advice for a matmul under 85% of the FMA peak, from what was measured on it: its GFLOP/s on
/// a kInCache^3 product (`in_cache`), the plain i-k-j loop's on the same inputs (`ikj`), and its
/// GFLOP/s at the case's size `shape` ("1024 x 1024 x 1024"; `at_size` 0: not measured, as for a
/// kernel no faster than i-k-j). `leftovers` is what the case's sizes add (primes).
inline std::string advice(double in_cache, double ikj, double at_size, const std::string& shape,
                          const std::string& leftovers) {
  const std::string measured = "On a " + std::to_string(kInCache) + "^3 product that stays in " +
                               "the L2 cache your matmul runs at " + num(in_cache) +
                               " GFLOP/s, the plain i-k-j loop at " + num(ikj) + " GFLOP/s";
  if (in_cache < 0.6 * ikj)
    return measured +
           ": the caches are not what holds it back, its innermost loop is. The i-k-j order "
           "runs that loop along a row of B and of C, and the compiler vectorises it (step 2). "
           "A loop down a column of B, one scalar sum that waits for each addition, or a loop the "
           "compiler could not vectorise (-fopt-info-vec-missed says why) is slower.";
  if (in_cache < kPastIkj * ikj)
    return measured +
           ": about as fast. Vectorised like it, perhaps, but each FMA loads a batch of C and "
           "stores it back, so moving C binds long before the FMA units do. Register blocking "
           "(step 4): keep a tile of C, 6 rows x 4 batches with AVX-512, in Batch accumulators "
           "while p runs, broadcasting A(i, p); store the tile once at the end.";
  if (at_size > 0 && at_size < 0.7 * in_cache)
    return measured + " (" + num(in_cache / ikj) + "x): its tiles are register blocked. At " +
           shape + " it runs at " + num(at_size) + " GFLOP/s, " +
           std::to_string(int(100 * at_size / in_cache + 0.5)) +
           "% of that: it slows down as the matrices grow. Either its blocks thrash (a kc x nc "
           "block of B must stay in the L2 and an mc x kc block of A in the L1 while the tiles "
           "walk them, step 3: check your block sizes against the handout's), or it repeats work "
           "that grows with the matrices (a block of B packed again for every panel of rows, "
           "instead of once per block of k, step 5: check where each pack is called)." +
           leftovers;
  return measured + " (" + num(in_cache / ikj) + "x)" +
         (at_size > 0 ? ", and at " + shape + " it keeps " +
                            std::to_string(int(100 * at_size / in_cache + 0.5)) +
                            "% of that speed: the blocking works"
                      : std::string()) +
         ". What is left is the micro-kernel: the whole tile of C in registers (objdump -d "
         "lab02_perf: no loads or stores of accumulators inside the p loop), at least 8 "
         "independent accumulators (2 FMA units x 4 cycles), and packed, zero-padded panels read "
         "front to back so that the last tiles run the same kernel (step 5)." +
         leftovers;
}

}  // namespace lab02::hints
