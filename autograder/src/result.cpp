// The result types' own code: names of items, and record.json both ways.
#include <grade/result.hpp>

#include <grade/util.hpp>

namespace workbook::grade {

using nlohmann::json;

const char* to_string(ItemStatus status) {
  switch (status) {
    case ItemStatus::not_run:
      return "not_run";
    case ItemStatus::passed:
      return "passed";
    case ItemStatus::failed:
      return "failed";
    case ItemStatus::skipped:
      return "skipped";
  }
  return "not_run";
}

const char* to_string(LabStatus status) {
  switch (status) {
    case LabStatus::graded:
      return "graded";
    case LabStatus::not_graded:
      return "not_graded";
    case LabStatus::not_submitted:
      return "not_submitted";
    case LabStatus::compile_error:
      return "compile_error";
    case LabStatus::symbol_error:
      return "symbol_error";
    case LabStatus::link_error:
      return "link_error";
    case LabStatus::unavailable:
      return "unavailable";
    case LabStatus::environment_error:
      return "environment_error";
  }
  return "graded";
}

std::string Item::name() const {
  const std::string prefix = "lab" + lab + " ";
  switch (source) {
    case Source::visible:
      return prefix + test;
    case Source::hidden:
      return prefix + "hidden " + test;
    case Source::perf:
      return prefix + "perf " + test;
  }
  return prefix + test;
}

// An item's record carries its name too (for readers of record.json), and its source as a word.
void to_json(json& j, const Item& i) {
  j = {{"name", i.name()},
       {"lab", i.lab},
       {"source", to_string(i.source)},
       {"test", i.test},
       {"function", i.function},
       {"score", i.score},
       {"max_score", i.max_score},
       {"status", i.status},
       {"output", i.output},
       {"visibility", i.visibility},
       {"gate", i.gate},
       {"forfeit", i.forfeit},
       {"seconds", i.seconds},
       {"details", i.details}};
}

void from_json(const json& j, Item& item) {
  item.lab = j.value("lab", "");
  item.source = source_from_string(j.value("source", "visible"));
  item.test = j.value("test", "");
  item.function = j.value("function", "");
  item.score = j.value("score", 0.0);
  item.max_score = j.value("max_score", 0.0);
  item.status = j.value("status", ItemStatus::not_run);
  item.output = j.value("output", "");
  item.visibility = j.value("visibility", "visible");
  item.gate = j.value("gate", false);
  item.forfeit = j.value("forfeit", false);
  item.seconds = j.value("seconds", 0.0);
  item.details = j.value("details", json::object());
}

// A lab's plots are recorded by file name (the SVGs themselves are files beside the record).
void to_json(json& j, const LabResult& l) {
  json plots = json::array();
  for (const auto& [name, svg] : l.plots)
    plots.push_back({{"case", name}, {"svg", "lab" + l.number + "-" + name + ".svg"}});
  j = {{"lab", l.number},
       {"folder", l.folder},
       {"title", l.title},
       {"status", l.status},
       {"build_output", l.build_output},
       {"score", l.score},
       {"max_score", l.max_score},
       {"seconds", l.seconds},
       {"notes", l.notes},
       {"plots", plots},
       {"graded_with", l.graded_with},
       {"items", l.items}};
}

void from_json(const json& l, LabResult& r) {
  r.number = l.value("lab", "");
  r.folder = l.value("folder", "");
  r.title = l.value("title", "");
  r.status = l.value("status", LabStatus::graded);
  r.build_output = l.value("build_output", "");
  r.score = l.value("score", 0.0);
  r.max_score = l.value("max_score", 0.0);
  r.seconds = l.value("seconds", 0.0);
  r.notes = l.value("notes", std::vector<std::string>{});
  r.items = l.value("items", std::vector<Item>{});
  r.graded_with = l.value("graded_with", json());
}

nlohmann::json GradeResult::to_json() const {
  return {{"format", 1},
          {"id", id},
          {"submission", submission},
          {"started_at", started_at},
          {"seconds", seconds},
          {"score", score},
          {"max_score", max_score},
          {"seed", seed},
          {"cache_key", cache_key},
          {"isolation", isolation},
          {"ceilings", ceilings},
          {"files", files},
          {"labs", labs},
          {"warnings", warnings},
          {"leaderboard_name", leaderboard_name}};
}

GradeResult GradeResult::from_json(const nlohmann::json& j) {
  GradeResult g;
  g.id = j.value("id", "");
  g.submission = j.value("submission", "");
  g.started_at = j.value("started_at", "");
  g.seconds = j.value("seconds", 0.0);
  g.score = j.value("score", 0.0);
  g.max_score = j.value("max_score", 0.0);
  g.seed = j.value("seed", std::uint64_t{0});
  g.cache_key = j.value("cache_key", "");
  g.isolation = j.value("isolation", json::object());
  g.ceilings = j.value("ceilings", json());
  g.files = j.value("files", std::vector<SubmittedFile>{});
  g.labs = j.value("labs", std::vector<LabResult>{});
  g.warnings = j.value("warnings", std::vector<std::string>{});
  g.leaderboard_name = j.value("leaderboard_name", "");
  return g;
}

}  // namespace workbook::grade
