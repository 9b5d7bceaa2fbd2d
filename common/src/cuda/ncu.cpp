#include <workbook/internal/cuda/ncu.hpp>

#include <workbook/format.hpp>
#include <workbook/report.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::cuda::ncu {
namespace {

// One CSV record: fields separated by commas, each optionally in double quotes ("" is a quote).
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        fields.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
    } else if (ch != '\r') {
      fields.back() += ch;
    }
  }
  return fields;
}

// ncu prints large numbers with thousands separators ("1,048,576") even in CSV; "n/a" is 0.
double number(const std::string& text) {
  std::string digits;
  for (char ch : text)
    if (ch != ',' && ch != ' ') digits += ch;
  if (digits.empty() || digits == "n/a") return 0;
  try {
    return std::stod(digits);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::string metric_list() {
  std::string list;
  for (const char* m : {kDuration, kComputeSol, kMemorySol, kDramSol, kDramRead, kDramWrite,
                        kOccupancy, kRegisters, kL2Bytes, kLoadSectorUse})
    list += (list.empty() ? "" : ",") + std::string(m);
  return list;
}

std::vector<Launch> parse_csv(std::string_view text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  // The table starts at the header ("ID","Process ID",...); ncu's own messages start with "==".
  std::size_t at = 0;
  while (at < lines.size() && lines[at].rfind("\"ID\"", 0) != 0) ++at;
  if (at == lines.size()) throw std::runtime_error("ncu's output holds no table of metrics");
  const std::vector<std::string> header = csv_fields(lines[at]);
  std::map<std::string, std::size_t> column;
  for (std::size_t k = 0; k < header.size(); ++k) column.emplace(header[k], k);
  auto find = [&](std::initializer_list<const char*> names) -> std::optional<std::size_t> {
    for (const char* name : names)
      if (auto it = column.find(name); it != column.end()) return it->second;
    return std::nullopt;
  };
  const auto name = find({"Kernel Name", "Function Name", "Demangled Name"});
  const auto duration = find({kDuration});
  if (!name || !duration)
    throw std::runtime_error(std::string("ncu's table lacks the kernel name or ") + kDuration);

  std::vector<Launch> launches;
  for (std::size_t i = at + 1; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i][0] != '"') continue;  // ncu's messages, blank lines
    const std::vector<std::string> f = csv_fields(lines[i]);
    if (f.size() != header.size() || f[0].empty()) continue;  // the units row has no ID
    auto get = [&](std::initializer_list<const char*> names) {
      const auto k = find(names);
      return k ? number(f[*k]) : 0.0;
    };
    auto text_of = [&](const char* column_name) {
      const auto k = find({column_name});
      return k ? f[*k] : std::string();
    };
    Launch l;
    l.kernel = f[*name];
    l.grid = text_of("Grid Size");
    l.block = text_of("Block Size");
    l.seconds = get({kDuration}) * 1e-9;  // --print-units base: nanoseconds
    l.compute_pct = get({kComputeSol});
    l.memory_pct = get({kMemorySol});
    l.dram_pct = get({kDramSol});
    l.dram_bytes = get({kDramRead}) + get({kDramWrite});
    l.occupancy_pct = get({kOccupancy});
    l.registers = get({kRegisters});
    l.l2_bytes = get({kL2Bytes});
    l.load_sector_use_pct = get({kLoadSectorUse});
    launches.push_back(l);
  }
  return launches;
}

std::vector<std::string> traffic_notes(const std::string& record_json) {
  std::vector<std::string> notes;
  const nlohmann::json r = nlohmann::json::parse(record_json, nullptr, false);
  if (r.is_discarded() || !r.contains("ncu") || !r.contains("work_bytes")) return notes;
  const nlohmann::json& n = r["ncu"];
  const double needed = r["work_bytes"].get<double>();
  const double dram = n.value("dram_bytes_per_run", 0.0), l2 = n.value("l2_bytes_per_run", 0.0),
               use = n.value("load_sector_use_pct", 0.0);
  if (needed <= 0) return notes;
  auto mb = [](double bytes) { return format_fixed(bytes / 1e6, 1) + " MB"; };
  // Uncoalesced loads fetch a sector for a few of its bytes, again for each thread that needs
  // it: then the extra DRAM and L2 bytes are that, not elements visited again.
  const bool uncoalesced = use > 0 && use < 60;
  if (uncoalesced)
    notes.push_back("Nsight Compute: of each 32-byte sector the loads fetched, " +
                    format_fixed(use, 0) +
                    "% of the bytes were used (100% when the 32 threads of a warp read "
                    "neighbouring addresses): uncoalesced loads. Neighbouring threads must take "
                    "neighbouring elements at every step, not each a chunk of its own.");
  const std::string why = uncoalesced ? ": sectors fetched again for each thread that needs a few "
                                        "bytes of them (the uncoalesced loads above)"
                                      : "";
  if (dram > 1.2 * needed)
    notes.push_back("Nsight Compute: one call moved " + mb(dram) + " to and from device memory, " +
                    format_fixed(dram / needed, 1) + "x the " + mb(needed) + " the work needs" +
                    (uncoalesced ? why + "."
                                 : ": data read (or written) more than once, or cache lines "
                                   "fetched for a few of their bytes."));
  if (l2 > 2 * needed)
    notes.push_back("Nsight Compute: the L2 cache served " + mb(l2) + ", " +
                    format_fixed(l2 / needed, 1) + "x the " + mb(needed) + " the work needs" +
                    (uncoalesced
                         ? why + "."
                         : ": the same elements are read again and again, and the L2 hides it "
                           "from device memory. Count how many times one element is visited (a "
                           "loop whose step covers less than the whole grid visits each many "
                           "times)."));
  return notes;
}

std::optional<std::string> explain_failure(std::string_view log) {
  auto has = [&](std::string_view s) { return log.find(s) != std::string_view::npos; };
  if (has("ERR_NVGPUCTRPERM"))
    return "ncu may not read this GPU's performance counters: the driver allows it to "
           "administrators "
           "only (ERR_NVGPUCTRPERM). Run as root, or have the administrator load the NVIDIA driver "
           "with "
           "NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM). "
           "The "
           "harness's own timing above needs no counters.";
  if (has("LibraryNotLoaded") || has("Failed to initialize the profiler"))
    return "ncu could not start its profiler here (\"Failed to initialize the profiler\"): the "
           "counters are not accessible in this environment (some containers and sandboxes hide "
           "them). The harness's own timing above needs no counters.";
  if (has("Device not supported") || has("is not supported"))
    return "ncu does not support this GPU (or this driver): its counters are not accessible.";
  if (has("No kernels were profiled"))
    return "ncu profiled no kernel: the case launched none between cudaProfilerStart and "
           "cudaProfilerStop, or every launch failed.";
  return std::nullopt;
}

Verdict classify(double compute_pct, double memory_pct, double fraction_of_roof) {
  Verdict v;
  const double threshold = 60;  // under it on both, neither unit is the limit (KernelAgent's rule)
  if (compute_pct < threshold && memory_pct < threshold)
    v.bound = Bound::underutilized;
  else
    v.bound = memory_pct >= compute_pct ? Bound::memory : Bound::compute;
  v.at_roofline = fraction_of_roof >= 0.9;
  const std::string sol = "memory " + format_fixed(memory_pct, 0) + "% and SMs " +
                          format_fixed(compute_pct, 0) + "% of peak";
  switch (v.bound) {
    case Bound::memory:
      v.text = "memory bound (" + sol + "): the memory system is the busiest unit";
      break;
    case Bound::compute:
      v.text = "compute bound (" + sol + "): the SMs are the busiest unit";
      break;
    case Bound::underutilized:
      v.text = "underutilized (" + sol +
               ", both under 60%): neither is the limit; latency, too "
               "little work in flight, launch overhead or a tail of idle SMs is";
      break;
  }
  v.text += v.at_roofline ? "; at the roofline (" + format_percent(fraction_of_roof) +
                                " of the measured roof)"
                          : "; " + format_percent(fraction_of_roof) + " of the measured roof";
  return v;
}

Launch merge(const std::vector<Launch>& launches) {
  Launch m;
  for (const Launch& l : launches) {
    m.kernel += (m.kernel.empty() ? "" : " + ") + l.kernel;
    m.seconds += l.seconds;
    m.dram_bytes += l.dram_bytes;
    m.compute_pct += l.compute_pct * l.seconds;
    m.memory_pct += l.memory_pct * l.seconds;
    m.dram_pct += l.dram_pct * l.seconds;
    m.occupancy_pct += l.occupancy_pct * l.seconds;
    m.registers = std::max(m.registers, l.registers);
    m.l2_bytes += l.l2_bytes;
    m.load_sector_use_pct += l.load_sector_use_pct * l.seconds;
  }
  if (launches.size() == 1) {
    m.grid = launches[0].grid;
    m.block = launches[0].block;
  }
  if (m.seconds > 0)
    for (double* pct :
         {&m.compute_pct, &m.memory_pct, &m.dram_pct, &m.occupancy_pct, &m.load_sector_use_pct})
      *pct /= m.seconds;
  return m;
}

std::optional<std::string> find_ncu() {
  if (const char* p = std::getenv("WORKBOOK_NCU"); p != nullptr && *p != '\0')
    return std::string(p);
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      const std::string candidate = (dir.empty() ? "." : dir) + "/ncu";
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  for (const char* candidate : {"/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"})
    if (access(candidate, X_OK) == 0) return std::string(candidate);
  return std::nullopt;
}

}  // namespace workbook::cuda::ncu
