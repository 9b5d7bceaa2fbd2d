#pragma once
/// \file internal/work_json.hpp
/// \brief The one conversion of a kernel's work model (workbook::Work) to and from JSON, for the
/// bench's records and the perf protocol: `nlohmann::json j = work;`, `work = j.get<Work>();`.

#include <workbook/roofline.hpp>

#include <string>

#include <nlohmann/json.hpp>

namespace workbook {

// Traffic and Compute travel by their names (to_string); an unknown name throws
// std::invalid_argument, where NLOHMANN_JSON_SERIALIZE_ENUM would quietly read the first value.
inline void to_json(nlohmann::json& j, Traffic traffic) {
  j = to_string(traffic);
}
inline void from_json(const nlohmann::json& j, Traffic& traffic) {
  traffic = traffic_from_string(j.get<std::string>());
}
inline void to_json(nlohmann::json& j, Compute compute) {
  j = to_string(compute);
}
inline void from_json(const nlohmann::json& j, Compute& compute) {
  compute = compute_from_string(j.get<std::string>());
}

// {"ops", "bytes", "traffic", "threads", "compute", "ops_unit"}: every field required when read.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Work, ops, bytes, traffic, threads, compute, ops_unit)

}  // namespace workbook
