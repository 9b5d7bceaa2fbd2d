// The ceilings cache: JSON in the build tree, checked against the machine it was measured on.
#include <workbook/ceilings.hpp>
#include <workbook/internal/ceilings_json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook {

nlohmann::json Ceilings::to_json() const {
  nlohmann::json j = *this;
  j["format"] = kFormat;
  j["machine"]["fingerprint"] =
      machine.fingerprint();  // for whoever reads the file; recomputed when loaded
  return j;
}

Ceilings Ceilings::from_json(const nlohmann::json& j) {
  if (j.contains("device")) return j.get<Ceilings>();
  nlohmann::json with_device = j;  // caches written before GPUs were measured have no "device"
  with_device["device"] = "";
  return with_device.get<Ceilings>();
}

std::optional<Ceilings> load_ceilings(const std::string& path,
                                      const std::function<bool(const Ceilings&)>& valid) {
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
  return load_ceilings(path, [](const Ceilings& c) {
    return c.machine.fingerprint() == machine_info().fingerprint();
  });
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
                                  const std::function<Ceilings(const Progress&)>& measure,
                                  const std::string& what) {
  if (!remeasure) {
    if (auto cached = load_ceilings(path, valid)) return *cached;
    if (progress)
      progress("no ceilings measured on this " + what + " yet (" + path + "): measuring now");
  }
  Ceilings c = measure(progress);
  save_ceilings(path, c);
  return c;
}

Ceilings load_or_measure_ceilings(const std::string& path, bool remeasure,
                                  const Progress& progress) {
  return load_or_measure_ceilings(
      path, remeasure, progress,
      [](const Ceilings& c) { return c.machine.fingerprint() == machine_info().fingerprint(); },
      [](const Progress& p) { return measure_ceilings(p); }, "machine");
}

std::string default_ceilings_path() {
  if (const char* p = std::getenv("WORKBOOK_CEILINGS"); p != nullptr && *p != '\0') return p;
  return "workbook-ceilings.json";
}

}  // namespace workbook
