#pragma once
/// \file roofline.hpp
/// \brief The roofline model: a kernel's work (operations and the fewest bytes it must move) and a
/// measured time give achieved bandwidth, achieved rate and arithmetic intensity; the measured
/// ceilings say which roof binds, how close the kernel is to it, and what to try next.
///
/// Attainable rate = min(compute roof, intensity x bandwidth roof). The ridge point, compute roof /
/// bandwidth roof, separates memory-bound work (intensity below it) from compute-bound work.

#include <workbook/ceilings.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace workbook {

/// Where a kernel's bytes come from and how they flow, which decides its bandwidth roof: the
/// measured ceiling kernel with the same mix of traffic. (Memory delivers more bytes per second to
/// a read-heavy kernel than to a copy, so one roof for all would be wrong by 10% or more.)
enum class Traffic {
  copy,   ///< from memory, one stream in and one out (ReLU): the copy roof
  triad,  ///< from memory, two streams in and one out (a + b): the triad roof
  read,   ///< from memory, reads only (the dot product of long vectors): the read roof
  l1,     ///< from the L1 data cache (small inputs read again and again): the L1 load roof
};
/// "copy", "triad", "read" or "l1": the name in JSON records and worker messages.
const char* to_string(Traffic traffic);
/// The inverse of to_string; throws std::invalid_argument on an unknown name.
Traffic traffic_from_string(std::string_view name);

/// Which arithmetic a kernel's operations are, which decides its compute roof.
enum class Compute {
  fp32,  ///< float32 multiply-adds: the FMA peak (GFLOP/s)
  int8,  ///< int8 products summed into int32: the int8 dot-product peak (GOP/s)
};
/// "fp32" or "int8".
const char* to_string(Compute compute);
/// The inverse of to_string(Compute); throws std::invalid_argument on an unknown name.
Compute compute_from_string(std::string_view name);

/// What one call of a kernel must do, counted from the algorithm, not from the code.
struct Work {
  double ops = 0;  ///< arithmetic operations (FLOP; an FMA counts 2, a ReLU's max counts 1)
  /// The fewest bytes it must move: each input read once, each output written once.
  double bytes = 0;
  Traffic traffic = Traffic::copy;  ///< which bandwidth roof applies
  unsigned threads = 1;             ///< 1: one-core roofs; more: the all-thread roofs
  Compute compute = Compute::fp32;  ///< which compute roof applies
  std::string ops_unit = "FLOP";    ///< "OP" for int8 work

  double intensity() const { return bytes > 0 ? ops / bytes : 0; }  ///< operations per byte
};

/// The two roofs that apply to a piece of work.
struct Roofs {
  double bandwidth_gbs = 0;    ///< GB/s, bytes read plus bytes written
  std::string bandwidth_name;  ///< e.g. "copy, 1 thread"
  double compute_gops = 0;     ///< GFLOP/s, or GOP/s for int8 work
  std::string compute_name;    ///< e.g. "FMA peak, 1 core"
  double ridge() const { return compute_gops / bandwidth_gbs; }  ///< operations per byte
};
/// The roofs for `work`: the ceiling of its traffic and of its arithmetic, for one thread or all
/// (the L1 roof scales with the cores used); a GPU's ceilings give the whole device's. Throws
/// std::invalid_argument when that ceiling was never measured (zero).
Roofs roofs_for(const Work& work, const Ceilings& ceilings);

/// The least time the roofline allows: max(bytes / bandwidth, ops / compute).
double roofline_seconds(const Work& work, const Ceilings& ceilings);

/// What binds a kernel, as measured.
enum class Bound {
  memory,         ///< at least 60% of the bandwidth roof, and more of it than of the compute roof
  compute,        ///< at least 60% of the compute roof, and more of it than of the bandwidth roof
  underutilized,  ///< under 60% of both: latency, dependencies, too little parallel work
};
/// "memory", "compute" or "underutilized".
const char* to_string(Bound bound);

/// A measured kernel placed on the roofline.
struct Analysis {
  Work work;                           ///< what one call does
  Roofs roofs;                         ///< the roofs that apply to it
  double seconds = 0;                  ///< the measured time of one call (a median)
  double gbs = 0;                      ///< achieved bandwidth: work.bytes / seconds
  double gops = 0;                     ///< achieved rate: work.ops / seconds
  double intensity = 0;                ///< work.intensity()
  double attainable_gops = 0;          ///< min(compute roof, intensity x bandwidth roof)
  double fraction_of_roof = 0;         ///< roofline_seconds / seconds: 1 is on the roofline
  double fraction_of_bandwidth = 0;    ///< gbs / the bandwidth roof
  double fraction_of_compute = 0;      ///< gops / the compute roof
  bool memory_bound_model = false;     ///< intensity below the ridge
  Bound bound = Bound::underutilized;  ///< what binds it, as measured (60% thresholds, see Bound)
  bool at_roofline = false;            ///< fraction_of_roof >= 0.9
};
/// Places one call of `work` taking `seconds` on the roofline of `ceilings`. Throws
/// std::invalid_argument when `seconds` is not positive, or as roofs_for does.
Analysis analyze(const Work& work, double seconds, const Ceilings& ceilings);

/// A lab's advice for a kernel that reaches less than `below` of its roof (0..1).
struct Hint {
  double below = 1.0;  ///< applies under this fraction of the roof (Analysis::fraction_of_roof)
  std::string text;    ///< what to try, in the lab's terms ("block the k loop: see step 3")
};

/// The next step for the student: the first lab hint whose threshold the kernel is under (hints
/// sorted by `below`, lowest first), else general advice for its bound.
std::string next_step(const Analysis& analysis, std::span<const Hint> hints);

/// One line: "memory bound (intensity 0.125 FLOP/B, ridge 4.7): 79% of copy, 1 thread (48.2 GB/s)".
std::string verdict(const Analysis& analysis);

}  // namespace workbook
