#include <grade/rubric.hpp>

#include <grade/util.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

using nlohmann::json;

// Rubrics are hand-written: a misspelt key must be an error, not a silently ignored setting.
void only_keys(const json& object, const std::set<std::string>& allowed, const std::string& where) {
  if (!object.is_object()) throw std::runtime_error(where + " must be a JSON object");
  for (const auto& [key, value] : object.items())
    if (!allowed.count(key)) throw std::runtime_error(where + ": unknown key '" + key + "'");
}

PerfScale read_scale(const json& j, PerfScale s, const std::string& where) {
  only_keys(j,
            {"full_within", "zero_at", "scale", "implausible_ratio", "implausible_roof",
             "max_seconds", "about"},
            where);
  s.full_within = j.value("full_within", s.full_within);
  s.zero_at = j.value("zero_at", s.zero_at);
  const std::string scale = j.value("scale", s.logarithmic ? "log" : "linear");
  if (scale != "linear" && scale != "log")
    throw std::runtime_error(where + ": scale is 'linear' or 'log'");
  s.logarithmic = scale == "log";
  s.implausible_ratio = j.value("implausible_ratio", s.implausible_ratio);
  s.implausible_roof = j.value("implausible_roof", s.implausible_roof);
  s.max_seconds = j.value("max_seconds", s.max_seconds);
  if (!(s.full_within >= 1 && s.zero_at > s.full_within))
    throw std::runtime_error(where + ": needs 1 <= full_within < zero_at");
  return s;
}

const std::set<std::string> kVisibility = {"visible", "hidden", "after_due_date",
                                           "after_published"};

}  // namespace

// How the enums are written. Read back through source_from_string and Rubric::load, which refuse an
// unknown name (these macros would map it to the first value).
NLOHMANN_JSON_SERIALIZE_ENUM(Source, {{Source::visible, "visible"},
                                      {Source::hidden, "hidden"},
                                      {Source::perf, "perf"}})
NLOHMANN_JSON_SERIALIZE_ENUM(SkipPolicy,
                             {{SkipPolicy::exclude, "exclude"}, {SkipPolicy::zero, "zero"}})

const char* to_string(Source source) {
  switch (source) {
    case Source::visible:
      return "visible";
    case Source::hidden:
      return "hidden";
    case Source::perf:
      return "perf";
  }
  return "?";
}

Source source_from_string(const std::string& text) {
  if (text == "visible") return Source::visible;
  if (text == "hidden") return Source::hidden;
  if (text == "perf") return Source::perf;
  throw std::runtime_error("source '" + text + "': use visible, hidden or perf");
}

double PerfScale::fraction(double ratio) const {
  if (!(ratio > 0) || !std::isfinite(ratio)) return 0;
  if (ratio <= full_within) return 1;
  if (ratio >= zero_at) return 0;
  if (logarithmic) return std::log(zero_at / ratio) / std::log(zero_at / full_within);
  return (zero_at - ratio) / (zero_at - full_within);
}

const Rule* Rubric::find(Source source, const std::string& name) const {
  for (const Rule& r : rules)
    if (r.source == source && glob_match(r.match, name)) return &r;
  return nullptr;
}

std::string Rubric::function_of(const Rule* rule, Source source, const std::string& name) {
  if (rule && !rule->function.empty()) return rule->function;
  if (source == Source::perf) return name;
  // The suite name, CamelCase to snake_case: "SquaredDifference.Tail" -> "squared_difference".
  const std::string suite = name.substr(0, name.find('.'));
  std::string out;
  for (std::size_t i = 0; i < suite.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(suite[i]);
    if (std::isupper(c) && i > 0) out += '_';
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

Rubric Rubric::load(const std::string& path, const std::string& lab) {
  const json j = read_json(path);
  only_keys(j,
            {"format", "lab", "title", "about", "defaults", "limits", "perf", "rules",
             "extra_files", "optional_files", "allowed_symbols", "skip_reasons"},
            path);
  if (j.value("format", 0) != 1) throw std::runtime_error(path + ": \"format\": 1 expected");
  Rubric r;
  r.lab = j.value("lab", lab);
  if (r.lab != lab)
    throw std::runtime_error(path + " is the rubric of lab " + r.lab + ", not of lab " + lab);
  r.path = path;
  r.title = j.value("title", "");
  bool default_gate = false;
  double default_points = 1;
  if (j.contains("defaults")) {
    const json& d = j["defaults"];
    only_keys(d, {"visibility", "skipped", "timeout_seconds", "gate", "points", "about"},
              path + ": defaults");
    r.visibility = d.value("visibility", r.visibility);
    const std::string skipped = d.value("skipped", "exclude");
    if (skipped != "exclude" && skipped != "zero")
      throw std::runtime_error(path + ": skipped is 'exclude' or 'zero'");
    r.skipped = skipped == "zero" ? SkipPolicy::zero : SkipPolicy::exclude;
    r.test_timeout_seconds = d.value("timeout_seconds", r.test_timeout_seconds);
    default_gate = d.value("gate", false);
    default_points = d.value("points", 1.0);
  }
  if (!kVisibility.count(r.visibility))
    throw std::runtime_error(path + ": unknown visibility '" + r.visibility + "'");
  if (j.contains("limits")) {
    const json& l = j["limits"];
    only_keys(l,
              {"memory_mib", "processes", "file_mib", "output_kib", "compile_seconds",
               "lab_seconds", "source_kib", "about"},
              path + ": limits");
    r.memory_bytes = l.value("memory_mib", r.memory_bytes >> 20) << 20;
    r.processes = l.value("processes", r.processes);
    r.file_bytes = l.value("file_mib", r.file_bytes >> 20) << 20;
    r.output_keep_bytes = l.value("output_kib", r.output_keep_bytes >> 10) << 10;
    r.compile_seconds = l.value("compile_seconds", r.compile_seconds);
    r.lab_seconds = l.value("lab_seconds", r.lab_seconds);
    r.max_source_bytes = l.value("source_kib", r.max_source_bytes >> 10) << 10;
  }
  if (j.contains("perf")) r.perf = read_scale(j["perf"], r.perf, path + ": perf");
  r.extra_files = j.value("extra_files", std::vector<std::string>{});
  for (const std::string& f : r.extra_files)
    if (f.empty() || f.find("..") != std::string::npos || f.front() == '/')
      throw std::runtime_error(path + ": extra_files holds paths inside the lab folder, not '" + f +
                               "'");
  r.skip_reasons = j.value("skip_reasons", r.skip_reasons);
  r.optional_files = j.value("optional_files", std::vector<std::string>{});
  for (const std::string& f : r.optional_files)
    if (f.find('/') != std::string::npos)
      throw std::runtime_error(path + ": optional_files are file name patterns, not paths: '" + f +
                               "'");
  r.allowed_symbols = j.value("allowed_symbols", std::vector<std::string>{});
  if (!j.contains("rules") || !j["rules"].is_array())
    throw std::runtime_error(path + ": \"rules\" (an array) is missing");
  for (std::size_t i = 0; i < j["rules"].size(); ++i) {
    const json& x = j["rules"][i];
    const std::string where = path + ": rules[" + std::to_string(i) + "]";
    only_keys(
        x,
        {"source", "match", "function", "points", "visibility", "gate", "forfeit", "perf", "about"},
        where);
    Rule rule;
    rule.source = source_from_string(x.value("source", "visible"));
    rule.match = x.value("match", "");
    if (rule.match.empty()) throw std::runtime_error(where + ": \"match\" is missing");
    rule.function = x.value("function", "");
    rule.points = x.value("points", default_points);
    if (rule.points < 0) throw std::runtime_error(where + ": negative points");
    rule.visibility = x.value("visibility", r.visibility);
    if (!kVisibility.count(rule.visibility))
      throw std::runtime_error(where + ": unknown visibility '" + rule.visibility + "'");
    rule.forfeit = x.value("forfeit", false);
    rule.gate = x.value("gate", default_gate && rule.source == Source::hidden) || rule.forfeit;
    if (rule.gate && rule.source != Source::hidden)
      throw std::runtime_error(where +
                               ": only hidden (sealed) tests can gate or forfeit: the others run "
                               "in the student's process");
    if (x.contains("perf")) {
      if (rule.source != Source::perf)
        throw std::runtime_error(where + ": \"perf\" tiers belong to perf rules");
      rule.perf = read_scale(x["perf"], r.perf, where + ".perf");
    }
    r.rules.push_back(rule);
  }
  return r;
}

Rubric Rubric::default_for(const std::string& lab) {
  Rubric r;
  r.lab = lab;
  r.title = "default rubric (no autograder/labs/<lab>/rubric.json)";
  r.rules.push_back(
      {.source = Source::visible, .match = "*", .points = 1, .visibility = "visible"});
  r.rules.push_back(
      {.source = Source::hidden, .match = "*", .points = 1, .visibility = "after_due_date"});
  r.rules.push_back({.source = Source::perf, .match = "*", .points = 2, .visibility = "visible"});
  return r;
}

nlohmann::json Rubric::to_json() const {
  json rules_json = json::array();
  for (const Rule& rule : rules) {
    json x = {{"source", rule.source},         {"match", rule.match}, {"points", rule.points},
              {"visibility", rule.visibility}, {"gate", rule.gate},   {"forfeit", rule.forfeit}};
    if (!rule.function.empty()) x["function"] = rule.function;
    rules_json.push_back(x);
  }
  return {{"lab", lab},
          {"path", path},
          {"title", title},
          {"skipped", skipped},
          {"timeout_seconds", test_timeout_seconds},
          {"perf",
           {{"full_within", perf.full_within},
            {"zero_at", perf.zero_at},
            {"scale", perf.logarithmic ? "log" : "linear"},
            {"implausible_ratio", perf.implausible_ratio},
            {"implausible_roof", perf.implausible_roof},
            {"max_seconds", perf.max_seconds}}},
          {"rules", rules_json}};
}

}  // namespace workbook::grade
