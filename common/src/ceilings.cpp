// The ceilings cache: JSON in the build tree, checked against the machine it was measured on.
#include <workbook/ceilings.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook {

nlohmann::json Ceilings::to_json() const {
  return {
      {"format", kFormat},
      {"machine",
       {{"cpu_model", machine.cpu_model},
        {"logical_cpus", machine.logical_cpus},
        {"simd", machine.simd},
        {"simd_bytes", machine.simd_bytes},
        {"l1d_bytes", machine.l1d_bytes},
        {"l2_bytes", machine.l2_bytes},
        {"l3_bytes", machine.l3_bytes},
        {"hostname", machine.hostname},
        {"compiler", machine.compiler},
        {"fingerprint", machine.fingerprint()}}},
      {"measured_at", measured_at},
      {"threads", threads},
      {"copy_1t_gbs", copy_1t_gbs},
      {"copy_regular_1t_gbs", copy_regular_1t_gbs},
      {"copy_streaming_1t_gbs", copy_streaming_1t_gbs},
      {"copy_all_gbs", copy_all_gbs},
      {"triad_1t_gbs", triad_1t_gbs},
      {"triad_all_gbs", triad_all_gbs},
      {"read_1t_gbs", read_1t_gbs},
      {"read_all_gbs", read_all_gbs},
      {"l1_read_1t_gbs", l1_read_1t_gbs},
      {"fma_1t_gflops", fma_1t_gflops},
      {"fma_all_gflops", fma_all_gflops},
      {"int8_dot_1t_gops", int8_dot_1t_gops},
      {"int8_dot_all_gops", int8_dot_all_gops},
      {"int8_dot_instruction", int8_dot_instruction},
      {"cache_knee_bytes", cache_knee_bytes},
      {"device", device},
  };
}

Ceilings Ceilings::from_json(const nlohmann::json& j) {
  Ceilings c;
  const auto& m = j.at("machine");
  c.machine.cpu_model = m.at("cpu_model").get<std::string>();
  c.machine.logical_cpus = m.at("logical_cpus").get<unsigned>();
  c.machine.simd = m.at("simd").get<std::string>();
  c.machine.simd_bytes = m.at("simd_bytes").get<std::size_t>();
  c.machine.l1d_bytes = m.at("l1d_bytes").get<std::size_t>();
  c.machine.l2_bytes = m.at("l2_bytes").get<std::size_t>();
  c.machine.l3_bytes = m.at("l3_bytes").get<std::size_t>();
  c.machine.hostname = m.at("hostname").get<std::string>();
  c.machine.compiler = m.at("compiler").get<std::string>();
  c.measured_at = j.at("measured_at").get<std::string>();
  c.threads = j.at("threads").get<unsigned>();
  c.copy_1t_gbs = j.at("copy_1t_gbs").get<double>();
  c.copy_regular_1t_gbs = j.at("copy_regular_1t_gbs").get<double>();
  c.copy_streaming_1t_gbs = j.at("copy_streaming_1t_gbs").get<double>();
  c.copy_all_gbs = j.at("copy_all_gbs").get<double>();
  c.triad_1t_gbs = j.at("triad_1t_gbs").get<double>();
  c.triad_all_gbs = j.at("triad_all_gbs").get<double>();
  c.read_1t_gbs = j.at("read_1t_gbs").get<double>();
  c.read_all_gbs = j.at("read_all_gbs").get<double>();
  c.l1_read_1t_gbs = j.at("l1_read_1t_gbs").get<double>();
  c.fma_1t_gflops = j.at("fma_1t_gflops").get<double>();
  c.fma_all_gflops = j.at("fma_all_gflops").get<double>();
  c.int8_dot_1t_gops = j.at("int8_dot_1t_gops").get<double>();
  c.int8_dot_all_gops = j.at("int8_dot_all_gops").get<double>();
  c.int8_dot_instruction = j.at("int8_dot_instruction").get<std::string>();
  c.cache_knee_bytes = j.at("cache_knee_bytes").get<std::size_t>();
  c.device = j.value("device", "");  // absent from caches written before GPUs were measured
  return c;
}

std::optional<Ceilings> load_ceilings(const std::string& path, const std::function<bool(const Ceilings&)>& valid) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.value("format", 0) != Ceilings::kFormat) return std::nullopt;
    Ceilings c = Ceilings::from_json(j);
    if (!valid(c)) return std::nullopt;
    return c;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a damaged cache is re-measured, not fatal
  }
}

std::optional<Ceilings> load_ceilings(const std::string& path) {
  return load_ceilings(path, [](const Ceilings& c) { return c.machine.fingerprint() == machine_info().fingerprint(); });
}

void save_ceilings(const std::string& path, const Ceilings& ceilings) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary);
    out << ceilings.to_json().dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write the ceilings cache " + temporary);
  }
  std::filesystem::rename(temporary, target);
}

Ceilings load_or_measure_ceilings(const std::string& path, bool remeasure, const Progress& progress,
                                  const std::function<bool(const Ceilings&)>& valid,
                                  const std::function<Ceilings(const Progress&)>& measure, const std::string& what) {
  if (!remeasure) {
    if (auto cached = load_ceilings(path, valid)) return *cached;
    if (progress) progress("no ceilings measured on this " + what + " yet (" + path + "): measuring now");
  }
  Ceilings c = measure(progress);
  save_ceilings(path, c);
  return c;
}

Ceilings load_or_measure_ceilings(const std::string& path, bool remeasure, const Progress& progress) {
  return load_or_measure_ceilings(
      path, remeasure, progress, [](const Ceilings& c) { return c.machine.fingerprint() == machine_info().fingerprint(); },
      [](const Progress& p) { return measure_ceilings(p); }, "machine");
}

std::string default_ceilings_path() {
  if (const char* p = std::getenv("WORKBOOK_CEILINGS"); p != nullptr && *p != '\0') return p;
  return "workbook-ceilings.json";
}

}  // namespace workbook
