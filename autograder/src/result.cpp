// The result types' own code: names of items, and record.json both ways.
#include <grade/result.hpp>

#include <grade/util.hpp>

namespace workbook::grade {

using nlohmann::json;

std::string Item::name() const {
  const std::string prefix = "lab" + lab + " ";
  switch (source) {
    case Source::visible: return prefix + test;
    case Source::hidden: return prefix + "hidden " + test;
    case Source::perf: return prefix + "perf " + test;
  }
  return prefix + test;
}

nlohmann::json GradeResult::to_json() const {
  json labs_json = json::array();
  for (const LabResult& l : labs) {
    json items_json = json::array();
    for (const Item& i : l.items)
      items_json.push_back({{"name", i.name()}, {"lab", i.lab}, {"source", to_string(i.source)}, {"test", i.test},
                            {"function", i.function}, {"score", i.score}, {"max_score", i.max_score}, {"status", i.status},
                            {"output", i.output}, {"visibility", i.visibility}, {"gate", i.gate}, {"forfeit", i.forfeit}, {"seconds", i.seconds},
                            {"details", i.details}});
    json plots = json::array();
    for (const auto& [name, svg] : l.plots) plots.push_back({{"case", name}, {"svg", "lab" + l.number + "-" + name + ".svg"}});
    labs_json.push_back({{"lab", l.number}, {"folder", l.folder}, {"title", l.title}, {"status", l.status},
                         {"build_output", l.build_output}, {"score", l.score}, {"max_score", l.max_score},
                         {"seconds", l.seconds}, {"notes", l.notes}, {"plots", plots}, {"items", items_json}});
  }
  json files_json = json::array();
  for (const SubmittedFile& f : files) files_json.push_back({{"path", f.path}, {"bytes", f.bytes}, {"hash", f.hash}});
  return {{"format", 1},        {"id", id},           {"submission", submission}, {"started_at", started_at},
          {"seconds", seconds}, {"score", score},     {"max_score", max_score},   {"seed", seed},
          {"cache_key", cache_key}, {"isolation", isolation}, {"ceilings", ceilings}, {"files", files_json}, {"labs", labs_json},
          {"warnings", warnings}};
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
  for (const json& f : items_of(j, "files")) g.files.push_back({f.value("path", ""), f.value("bytes", std::uint64_t{0}), f.value("hash", "")});
  for (const json& l : items_of(j, "labs")) {
    LabResult r;
    r.number = l.value("lab", "");
    r.folder = l.value("folder", "");
    r.title = l.value("title", "");
    r.status = l.value("status", "");
    r.build_output = l.value("build_output", "");
    r.score = l.value("score", 0.0);
    r.max_score = l.value("max_score", 0.0);
    r.seconds = l.value("seconds", 0.0);
    r.notes = l.value("notes", std::vector<std::string>{});
    for (const json& i : items_of(l, "items")) {
      Item item;
      item.lab = i.value("lab", "");
      item.source = source_from_string(i.value("source", "visible"));
      item.test = i.value("test", "");
      item.function = i.value("function", "");
      item.score = i.value("score", 0.0);
      item.max_score = i.value("max_score", 0.0);
      item.status = i.value("status", "");
      item.output = i.value("output", "");
      item.visibility = i.value("visibility", "visible");
      item.gate = i.value("gate", false);
      item.forfeit = i.value("forfeit", false);
      item.seconds = i.value("seconds", 0.0);
      item.details = i.value("details", json::object());
      r.items.push_back(item);
    }
    g.labs.push_back(r);
  }
  g.warnings = j.value("warnings", std::vector<std::string>{});
  return g;
}

}  // namespace workbook::grade
