#include <workbook/roofline.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace workbook {
namespace {

std::string num(double v, const char* format = "%.3g") {
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

std::string percent(double fraction) {
  return num(100 * fraction, "%.0f") + "%";
}

}  // namespace

const char* to_string(Traffic traffic) {
  switch (traffic) {
    case Traffic::copy:
      return "copy";
    case Traffic::triad:
      return "triad";
    case Traffic::read:
      return "read";
    case Traffic::l1:
      return "l1";
  }
  return "?";
}

Traffic traffic_from_string(std::string_view name) {
  for (Traffic t : {Traffic::copy, Traffic::triad, Traffic::read, Traffic::l1})
    if (name == to_string(t)) return t;
  throw std::invalid_argument("unknown memory traffic '" + std::string(name) + "'");
}

const char* to_string(Compute compute) {
  return compute == Compute::int8 ? "int8" : "fp32";
}

Compute compute_from_string(std::string_view name) {
  if (name == "fp32") return Compute::fp32;
  if (name == "int8") return Compute::int8;
  throw std::invalid_argument("unknown arithmetic '" + std::string(name) + "'");
}

namespace {

// A GPU's roofs are the whole device's: one figure per kind of traffic, one FMA peak.
Roofs gpu_roofs_for(const Work& work, const Ceilings& c) {
  Roofs r;
  switch (work.traffic) {
    case Traffic::copy:
      r.bandwidth_gbs = c.copy_all_gbs;
      r.bandwidth_name = "device copy";
      break;
    case Traffic::triad:
      r.bandwidth_gbs = c.triad_all_gbs;
      r.bandwidth_name = "device triad";
      break;
    case Traffic::read:
      r.bandwidth_gbs = c.read_all_gbs;
      r.bandwidth_name = "device reads";
      break;
    case Traffic::l1:
      r.bandwidth_gbs = c.l1_read_1t_gbs;
      r.bandwidth_name = "copy in L2";
      break;
  }
  if (work.compute == Compute::int8) {
    r.compute_gops = c.int8_dot_all_gops;
    r.compute_name = "int8 dot peak, " + std::to_string(c.threads) + " SMs";
  } else {
    r.compute_gops = c.fma_all_gflops;
    r.compute_name = "FMA peak, " + std::to_string(c.threads) + " SMs";
  }
  return r;
}

}  // namespace

Roofs roofs_for(const Work& work, const Ceilings& c) {
  if (!c.device.empty()) {
    const Roofs r = gpu_roofs_for(work, c);
    if (r.bandwidth_gbs <= 0 || r.compute_gops <= 0)
      throw std::invalid_argument("roofline: the GPU's " + r.bandwidth_name + " or " +
                                  r.compute_name + " roof is not measured");
    return r;
  }
  const bool all = work.threads > 1;
  const std::string threads = all ? std::to_string(c.threads) + " threads" : "1 thread";
  Roofs r;
  switch (work.traffic) {
    case Traffic::l1: {
      // Each core has its own L1: n threads get n times one core's L1 bandwidth.
      const unsigned cores = all ? std::min(work.threads, c.threads) : 1;
      r.bandwidth_gbs = c.l1_read_1t_gbs * cores;
      r.bandwidth_name = "L1 loads, " + std::to_string(cores) + (cores == 1 ? " core" : " cores");
      break;
    }
    case Traffic::copy:
      r.bandwidth_gbs = all ? c.copy_all_gbs : c.copy_1t_gbs;
      r.bandwidth_name = "copy, " + threads;
      break;
    case Traffic::triad:
      r.bandwidth_gbs = all ? c.triad_all_gbs : c.triad_1t_gbs;
      r.bandwidth_name = "triad, " + threads;
      break;
    case Traffic::read:
      r.bandwidth_gbs = all ? c.read_all_gbs : c.read_1t_gbs;
      r.bandwidth_name = "reads, " + threads;
      break;
  }
  if (work.compute == Compute::int8) {
    r.compute_gops = all ? c.int8_dot_all_gops : c.int8_dot_1t_gops;
    r.compute_name =
        all ? "int8 dot peak, " + std::to_string(c.threads) + " threads" : "int8 dot peak, 1 core";
  } else {
    r.compute_gops = all ? c.fma_all_gflops : c.fma_1t_gflops;
    r.compute_name =
        all ? "FMA peak, " + std::to_string(c.threads) + " threads" : "FMA peak, 1 core";
  }
  if (r.bandwidth_gbs <= 0 || r.compute_gops <= 0)
    throw std::invalid_argument("roofline: the ceilings are not measured (zero roofs)");
  return r;
}

double roofline_seconds(const Work& work, const Ceilings& ceilings) {
  const Roofs r = roofs_for(work, ceilings);
  return std::max(work.bytes / (r.bandwidth_gbs * 1e9), work.ops / (r.compute_gops * 1e9));
}

const char* to_string(Bound bound) {
  switch (bound) {
    case Bound::memory:
      return "memory";
    case Bound::compute:
      return "compute";
    case Bound::underutilized:
      return "underutilized";
  }
  return "?";
}

Analysis analyze(const Work& work, double seconds, const Ceilings& ceilings) {
  if (!(seconds > 0)) throw std::invalid_argument("roofline: a time must be positive");
  Analysis a;
  a.work = work;
  a.roofs = roofs_for(work, ceilings);
  a.seconds = seconds;
  a.gbs = work.bytes / seconds / 1e9;
  a.gops = work.ops / seconds / 1e9;
  a.intensity = work.intensity();
  a.attainable_gops = std::min(a.roofs.compute_gops, a.intensity * a.roofs.bandwidth_gbs);
  a.fraction_of_roof = roofline_seconds(work, ceilings) / seconds;
  a.fraction_of_bandwidth = a.gbs / a.roofs.bandwidth_gbs;
  a.fraction_of_compute = a.gops / a.roofs.compute_gops;
  a.memory_bound_model = a.intensity < a.roofs.ridge();
  const double best = std::max(a.fraction_of_bandwidth, a.fraction_of_compute);
  a.bound = best < 0.6                                         ? Bound::underutilized
            : a.fraction_of_bandwidth >= a.fraction_of_compute ? Bound::memory
                                                               : Bound::compute;
  a.at_roofline = a.fraction_of_roof >= 0.9;
  return a;
}

std::string verdict(const Analysis& a) {
  const std::string model = a.memory_bound_model ? "memory-bound work" : "compute-bound work";
  std::string s = model + " (intensity " + num(a.intensity) + " " + a.work.ops_unit + "/B, ridge " +
                  num(a.roofs.ridge()) + "): ";
  if (a.memory_bound_model)
    s += percent(a.fraction_of_bandwidth) + " of " + a.roofs.bandwidth_name + " (" +
         num(a.roofs.bandwidth_gbs, "%.1f") + " GB/s)";
  else
    s += percent(a.fraction_of_compute) + " of " + a.roofs.compute_name + " (" +
         num(a.roofs.compute_gops, "%.1f") + " G" + a.work.ops_unit + "/s)";
  s +=
      a.at_roofline ? ", at the roofline" : ", " + std::string(to_string(a.bound)) + " as measured";
  return s;
}

std::string next_step(const Analysis& a, std::span<const Hint> hints) {
  for (const Hint& h : hints)
    if (a.fraction_of_roof < h.below) return h.text;
  if (a.at_roofline)
    return "You are at the roofline: the " +
           std::string(a.memory_bound_model ? "memory" : "compute") +
           " roof binds, and only less work (fewer bytes, fewer operations) would make this "
           "faster.";
  if (a.bound == Bound::underutilized)
    return "Neither roof binds: the kernel waits on something else, usually one long chain of "
           "dependent operations (a single accumulator), scalar code, or too little work in "
           "flight. Vectorise, and keep several independent operations going at once.";
  if (a.memory_bound_model)
    return "Memory bound but short of the bandwidth roof: stream through the data once, in order, "
           "with full-width loads and stores; count the bytes you really move.";
  return "Compute bound but short of the FMA peak: keep every SIMD lane busy with fused "
         "multiply-adds and enough independent accumulators to hide their latency.";
}

}  // namespace workbook
