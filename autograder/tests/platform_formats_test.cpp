// What each platform reads, checked against the platform's documented format (key names, none
// unknown at the top level or per test; types; enums; ranges), on the outputs the real functions
// write for results of every kind: all passed, a build failure, hidden tests, a perf case with its
// plot, a lab not graded here. And the reports' Markdown, rendered by cmark-gfm.
#include <grade/batch.hpp>
#include <grade/markdown_html.hpp>
#include <grade/package.hpp>
#include <grade/report.hpp>
#include <grade/util.hpp>

#include <workbook/ceilings.hpp>
#include <workbook/report.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;
using namespace workbook::grade;

// --- The checks
// -----------------------------------------------------------------------------------

// Collects what does not match, each with where it is ("tests[3].status"), so that one run names
// every mismatch.
struct Checker {
  std::vector<std::string> problems;

  void fail(const std::string& where, const std::string& what) {
    problems.push_back(where + ": " + what);
  }
  // Keys of `object` that the format does not know.
  void only(const json& object, const std::string& where, const std::set<std::string>& known) {
    if (!object.is_object()) return fail(where, "not an object");
    for (const auto& [key, value] : object.items())
      if (!known.count(key)) fail(where + "." + key, "a key the format does not document");
  }
  // JSON carries no NaN or infinity (RFC 8259), and nlohmann writes them as null.
  void number(const json& object, const std::string& where, const char* key) {
    if (!object.contains(key)) return;
    const json& v = object[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      fail(where + "." + key, "not a finite number: " + v.dump());
  }
  void string(const json& object, const std::string& where, const char* key) {
    if (object.contains(key) && !object[key].is_string())
      fail(where + "." + key, "not a string: " + object[key].dump());
  }
  void one_of(const json& object, const std::string& where, const char* key,
              const std::set<std::string>& values) {
    if (!object.contains(key)) return;
    const json& v = object[key];
    if (!v.is_string() || !values.count(v.get<std::string>()))
      fail(where + "." + key, "not one of the documented values: " + v.dump());
  }
  void in_range(const json& object, const std::string& where, const char* key, double lo,
                double hi) {
    number(object, where, key);
    if (object.contains(key) && object[key].is_number() &&
        !(object[key].get<double>() >= lo && object[key].get<double>() <= hi))
      fail(where + "." + key, "outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                  "]: " + object[key].dump());
  }
  // Gradescope: "You should use Unix line endings (aka \n)".
  void text(const json& object, const std::string& where, const char* key) {
    string(object, where, key);
    if (object.contains(key) && object[key].is_string() &&
        object[key].get<std::string>().find('\r') != std::string::npos)
      fail(where + "." + key, "holds a carriage return");
  }
};

// Gradescope's results.json, as https://gradescope-autograders.readthedocs.io/en/latest/specs/
// documents it (the page's source: docs/specs.md in github.com/gradescope/autograder_samples):
// the keys of "Output format"; visibility values from "Controlling Test Case Visibility" and
// "Controlling standard output visibility"; status from "Test case status"; the formats from
// "Output String Formatting"; leaderboard entries {name, value, order} from its example.
std::vector<std::string> gradescope_problems(const json& r) {
  const std::set<std::string> formats = {"text", "html", "simple_format", "md", "ansi"};
  const std::set<std::string> visibilities = {"hidden", "after_due_date", "after_published",
                                              "visible"};
  Checker c;
  c.only(r, "results",
         {"score", "execution_time", "output", "output_format", "test_output_format",
          "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests",
          "leaderboard"});
  c.number(r, "results", "score");
  c.in_range(r, "results", "execution_time", 0, 1e9);  // seconds
  c.text(r, "results", "output");
  for (const char* key : {"output_format", "test_output_format", "test_name_format"})
    c.one_of(r, "results", key, formats);
  for (const char* key : {"visibility", "stdout_visibility"})
    c.one_of(r, "results", key, visibilities);
  if (r.contains("extra_data") && !r["extra_data"].is_object())
    c.fail("results.extra_data", "not an object");
  // "score: optional, but required if not on each test case"; "tests: optional, but required if
  // no top-level score".
  if (!r.contains("score") && !r.contains("tests")) c.fail("results", "neither a score nor tests");
  if (r.contains("tests")) {
    if (!r["tests"].is_array()) c.fail("results.tests", "not an array");
    for (std::size_t i = 0; r["tests"].is_array() && i < r["tests"].size(); ++i) {
      const json& t = r["tests"][i];
      const std::string where = "tests[" + std::to_string(i) + "]";
      c.only(t, where,
             {"score", "max_score", "status", "name", "name_format", "number", "output",
              "output_format", "tags", "visibility", "extra_data"});
      if (!t.is_object()) continue;
      if (!r.contains("score") && !t.contains("score"))
        c.fail(where, "no score, and no score at the top level");
      c.number(t, where, "score");
      c.number(t, where, "max_score");
      c.one_of(t, where, "status", {"passed", "failed"});
      c.string(t, where, "name");
      c.one_of(t, where, "name_format", formats);
      c.string(t, where, "number");  // the doc's example: "1.1"
      c.text(t, where, "output");
      c.one_of(t, where, "output_format", formats);
      if (t.contains("tags")) {
        if (!t["tags"].is_array()) c.fail(where + ".tags", "not an array");
        for (const json& tag : t.value("tags", json::array()))
          if (!tag.is_string()) c.fail(where + ".tags", "a tag that is not a string");
      }
      c.one_of(t, where, "visibility", visibilities);
      if (t.contains("extra_data") && !t["extra_data"].is_object())
        c.fail(where + ".extra_data", "not an object");
    }
  }
  if (r.contains("leaderboard")) {
    if (!r["leaderboard"].is_array()) c.fail("results.leaderboard", "not an array");
    for (std::size_t i = 0; r["leaderboard"].is_array() && i < r["leaderboard"].size(); ++i) {
      const json& e = r["leaderboard"][i];
      const std::string where = "leaderboard[" + std::to_string(i) + "]";
      c.only(e, where, {"name", "value", "order"});
      if (!e.is_object()) continue;
      c.string(e, where, "name");
      if (!e.contains("value") || !(e["value"].is_number() || e["value"].is_string()))
        c.fail(where + ".value", "not a number or a string");
      c.one_of(e, where, "order", {"asc", "desc"});
    }
  }
  return c.problems;
}

// The bytes of a base64 text, or nothing when it is not base64 (RFC 4648, padded).
std::optional<std::string> unbase64(const std::string& text) {
  static const std::string digits =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t v = 0;
    int pad = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char ch = text[i + k];
      const std::size_t d = digits.find(ch);
      if (ch == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
        v <<= 6;
      } else if (d == std::string::npos || pad > 0) {
        return std::nullopt;
      } else {
        v = v << 6 | static_cast<std::uint32_t>(d);
      }
    }
    for (int k = 0; k < 3 - pad; ++k) out += static_cast<char>((v >> (16 - 8 * k)) & 0xff);
  }
  return out;
}

// PrairieLearn's results.json, as https://prairielearn.readthedocs.io/en/latest/externalGrading/
// documents it under "Grading results" (the page's source: docs/externalGrading.md in
// github.com/PrairieLearn/PrairieLearn): `score` in [0.0, 1.0], required when gradable; `gradable`
// a boolean; `format_errors` a string or an array of strings, when not gradable; the keys of its
// example (message, output, images, tests with name, description, points, max_points, message,
// output, images); each image an object with `url` ("data:[mimetype];base64,[contents]") and an
// optional `label`, or the URL alone; the file at most 1 MB. The page allows any other data
// besides; none is written, so an unknown key here is a typo.
std::vector<std::string> prairielearn_problems(const json& r) {
  Checker c;
  c.only(r, "results",
         {"gradable", "score", "message", "output", "images", "tests", "format_errors"});
  if (r.contains("gradable") && !r["gradable"].is_boolean())
    c.fail("results.gradable", "not a boolean");
  const bool gradable = r.value("gradable", true);
  if (gradable && !r.contains("score")) c.fail("results", "gradable, but no score");
  c.in_range(r, "results", "score", 0, 1);
  if (r.contains("format_errors")) {
    if (gradable) c.fail("results.format_errors", "given for a gradable submission");
    const json& e = r["format_errors"];
    if (!(e.is_string() || e.is_array())) c.fail("results.format_errors", "not text or a list");
    for (const json& one : e.is_array() ? e : json::array())
      if (!one.is_string()) c.fail("results.format_errors", "an entry that is not a string");
  }
  c.string(r, "results", "message");
  c.string(r, "results", "output");
  auto images = [&](const json& object, const std::string& where) {
    if (!object.contains("images")) return;
    if (!object["images"].is_array()) return c.fail(where + ".images", "not an array");
    for (std::size_t i = 0; i < object["images"].size(); ++i) {
      const json& image = object["images"][i];
      const std::string at = where + ".images[" + std::to_string(i) + "]";
      if (image.is_object()) {
        c.only(image, at, {"url", "label"});
        c.string(image, at, "label");
      }
      const json url = image.is_object() ? image.value("url", json()) : image;
      if (!url.is_string()) {
        c.fail(at, "no url");
        continue;
      }
      const std::string u = url.get<std::string>();
      const std::size_t comma = u.find(',');
      const std::string head = u.substr(0, comma);
      if (comma == std::string::npos || head.rfind("data:image/", 0) != 0 || head.size() < 7 ||
          head.compare(head.size() - 7, 7, ";base64") != 0)
        c.fail(at + ".url", "not a data:image/...;base64, URL: " + u.substr(0, 40));
      else if (!unbase64(u.substr(comma + 1)))
        c.fail(at + ".url", "its contents are not base64");
    }
  };
  images(r, "results");
  if (r.contains("tests")) {
    if (!r["tests"].is_array()) c.fail("results.tests", "not an array");
    for (std::size_t i = 0; r["tests"].is_array() && i < r["tests"].size(); ++i) {
      const json& t = r["tests"][i];
      const std::string where = "tests[" + std::to_string(i) + "]";
      c.only(t, where,
             {"name", "description", "points", "max_points", "message", "output", "images"});
      if (!t.is_object()) continue;
      c.string(t, where, "name");
      c.string(t, where, "description");
      // The element shows no test's points when any test lacks either (pl-external-grader-
      // results.py, tests_missing_points).
      if (!t.contains("points") || !t.contains("max_points"))
        c.fail(where, "points or max_points missing: the element would show no test's points");
      c.in_range(t, where, "points", 0, 1e9);
      c.in_range(t, where, "max_points", 0, 1e9);
      c.string(t, where, "message");
      c.string(t, where, "output");
      images(t, where);
    }
  }
  if (r.dump().size() > 1000 * 1000) c.fail("results", "larger than 1 MB");
  return c.problems;
}

// The steps of a workflow as package.cpp writes it: "      - name:" opens a step, its keys are
// indented 8 spaces, those of its `with:` and `env:` 10. Not a YAML reader: enough for the one
// layout it is tested on, and a layout it does not know fails the test rather than passes it.
struct Step {
  std::map<std::string, std::string> keys, with, env;
};
std::vector<Step> workflow_steps(const std::string& yml) {
  std::vector<Step> steps;
  std::istringstream in(yml);
  std::string line, block;
  bool in_steps = false;
  auto key_value = [](const std::string& s) {
    const std::size_t colon = s.find(':');
    std::string value = colon + 1 < s.size() ? s.substr(colon + 1) : "";
    value.erase(0, value.find_first_not_of(' '));
    return std::pair(s.substr(0, colon), value);
  };
  while (std::getline(in, line)) {
    if (line == "    steps:") {
      in_steps = true;
      continue;
    }
    if (!in_steps || line.empty()) continue;
    if (line.rfind("      - ", 0) == 0) {
      steps.emplace_back();
      steps.back().keys.insert(key_value(line.substr(8)));
      block.clear();
    } else if (line.rfind("          ", 0) == 0 && line[10] != ' ' && !block.empty()) {
      (block == "with" ? steps.back().with : steps.back().env).insert(key_value(line.substr(10)));
    } else if (line.rfind("        ", 0) == 0 && line[8] != ' ') {
      const auto [key, value] = key_value(line.substr(8));
      block = (key == "with" || key == "env") && value.empty() ? key : "";
      if (block.empty()) steps.back().keys[key] = value;
    }
  }
  return steps;
}

// GitHub Classroom's workflow steps, as their actions document them: the command grader's inputs
// (test-name and command required, setup-command, timeout in minutes up to 6 hours, max-score;
// output `result`: github.com/classroom-resources/autograding-command-grader, action.yml), and the
// reporter's (`runners`, "a comma separated list of runner ids from previous steps", required, and
// `token`), with an environment variable [RUNNER-ID]_RESULTS per runner, "the ID of the runner in
// all capitals followed by _RESULTS" (github.com/classroom-resources/autograding-grading-reporter,
// action.yml and README.md).
std::vector<std::string> classroom_problems(const std::string& yml) {
  Checker c;
  const std::string grader = "classroom-resources/autograding-command-grader@v1";
  const std::string reporter = "classroom-resources/autograding-grading-reporter@v1";
  std::vector<std::string> ids;
  std::set<std::string> names;
  int reporters = 0;
  for (const Step& s : workflow_steps(yml)) {
    const std::string where = "step \"" + (s.keys.count("name") ? s.keys.at("name") : "?") + "\"";
    const std::string uses = s.keys.count("uses") ? s.keys.at("uses") : "";
    if (uses == grader) {
      if (!s.keys.count("id")) c.fail(where, "no id: the reporter cannot name it");
      ids.push_back(s.keys.count("id") ? s.keys.at("id") : "");
      c.only(json(s.with), where + ".with",
             {"test-name", "setup-command", "command", "timeout", "max-score"});
      for (const char* required : {"test-name", "command"})
        if (!s.with.count(required)) c.fail(where + ".with", std::string("no ") + required);
      if (s.with.count("test-name") && !names.insert(s.with.at("test-name")).second)
        c.fail(where, "test-name not unique: " + s.with.at("test-name"));
      if (s.with.count("timeout")) {
        const int minutes = std::atoi(s.with.at("timeout").c_str());
        if (std::to_string(minutes) != s.with.at("timeout") || minutes < 1 || minutes > 360)
          c.fail(where + ".with.timeout", "not whole minutes in [1, 360]: " + s.with.at("timeout"));
      }
      if (s.with.count("max-score")) {
        char* end = nullptr;
        const double v = std::strtod(s.with.at("max-score").c_str(), &end);
        if (*end != '\0' || !(v >= 0)) c.fail(where + ".with.max-score", "not a score");
      }
    } else if (uses == reporter) {
      ++reporters;
      c.only(json(s.with), where + ".with", {"runners", "token"});
      std::string expected;
      for (const std::string& id : ids) expected += (expected.empty() ? "" : ",") + id;
      if (!s.with.count("runners") || s.with.at("runners") != expected)
        c.fail(where + ".with.runners", "not the grader steps' ids, " + expected);
      std::map<std::string, std::string> env;
      for (std::string id : ids) {
        const std::string value = "\"${{ steps." + id + ".outputs.result }}\"";
        for (char& ch : id) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        env[id + "_RESULTS"] = value;
      }
      if (s.env != env) c.fail(where + ".env", "not one ID_RESULTS per grader step");
    } else if (uses.find("classroom-resources/") != std::string::npos) {
      c.fail(where, "an action of GitHub Classroom this check does not know: " + uses);
    }
  }
  if (ids.empty()) c.fail("workflow", "no grader step (a layout this check does not read?)");
  if (reporters != 1) c.fail("workflow", "not one reporter step");
  return c.problems;
}

// --- Results of every kind
// ------------------------------------------------------------------------

// A ceilings cache as the probe writes it (format 5), for real roofline plots.
json ceilings_json() {
  return json::parse(R"({
  "format": 5,
  "machine": {"cpu_model": "Example CPU @ 3.0GHz", "logical_cpus": 8, "simd": "avx2", "simd_bytes": 32,
              "l1d_bytes": 49152, "l2_bytes": 1310720, "l3_bytes": 25165824, "hostname": "lab-pc",
              "compiler": "GCC 12.2.0", "fingerprint": "x"},
  "measured_at": "2026-01-01T00:00:00Z", "threads": 8,
  "copy_1t_gbs": 20.5, "copy_regular_1t_gbs": 15.25, "copy_streaming_1t_gbs": 20.5, "copy_all_gbs": 40,
  "triad_1t_gbs": 21, "triad_all_gbs": 41, "read_1t_gbs": 25, "read_all_gbs": 50, "l1_read_1t_gbs": 300,
  "fma_1t_gflops": 96, "fma_all_gflops": 768, "int8_dot_1t_gops": 384, "int8_dot_all_gops": 3072,
  "int8_dot_instruction": "AVX2 vpmaddubsw", "cache_knee_bytes": 67108864, "device": ""
})");
}

Item item(Source source, const std::string& test, double score, double max, ItemStatus status,
          const std::string& output = "", const std::string& visibility = "visible") {
  return {.lab = "01",
          .source = source,
          .test = test,
          .function = "relu",
          .score = score,
          .max_score = max,
          .status = status,
          .output = output,
          .visibility = visibility};
}

GradeResult one_lab(const std::string& id, LabResult lab) {
  GradeResult r;
  r.id = id;
  r.seed = 7;
  r.seconds = 12.5;
  lab.number = "01";
  lab.folder = "01_vectorized_relu";
  for (const Item& i : lab.items) {
    lab.score += i.score;
    lab.max_score += i.max_score;
  }
  r.score = lab.score;
  r.max_score = lab.max_score;
  r.labs = {lab};
  r.ceilings = ceilings_json();
  return r;
}

Item perf_item(double score, double ratio) {
  Item perf =
      item(Source::perf, "relu", score, 5, score >= 5 ? ItemStatus::passed : ItemStatus::failed,
           "| | median | GB/s |\n|---|---|---|\n| yours | 1.2 ms | 9.6 |\n\n"
           "**Memory-bound**: 35% of the copy roof. Next: `_mm512_storeu_ps`.");
  perf.details = {{"ratio", ratio},   {"fraction_of_roof", 0.35}, {"gops", 1.2},
                  {"gbs", 9.6},       {"intensity", 0.125},       {"ops_unit", "FLOP"},
                  {"traffic", "copy"}};
  return perf;
}

std::string roofline(const std::string& title) {
  return workbook::roofline_svg(workbook::Ceilings::from_json(ceilings_json()),
                                {{"your kernel", 0.125, 1.2, workbook::PlotPoint::Role::student},
                                 {"reference", 0.125, 3.1, workbook::PlotPoint::Role::reference}},
                                {.title = title});
}

GradeResult all_passed() {
  LabResult l;
  l.items = {item(Source::visible, "Relu.Tail", 1, 1, ItemStatus::passed),
             item(Source::hidden, "Relu.MatchesOracle", 2, 2, ItemStatus::passed),
             perf_item(5, 1.0)};
  l.plots = {{"relu", roofline("lab 01: relu")}};
  return one_lab("ana", l);
}

GradeResult build_failure() {
  LabResult l;
  l.status = LabStatus::compile_error;
  l.build_output =
      "labs/01_vectorized_relu/vector_ops.cpp:3:1: error: expected ';' <before> "
      "'}'\n```\n## Score: 100 / 100";
  l.notes = {"labs/01_vectorized_relu/vector_ops.cpp does not compile"};
  l.items = {item(Source::visible, "Relu.Tail", 0, 1, ItemStatus::not_run),
             item(Source::perf, "relu", 0, 5, ItemStatus::not_run)};
  return one_lab("ben", l);
}

GradeResult hidden_tests() {
  LabResult l;
  l.items = {
      item(Source::visible, "Relu.Tail", 1, 1, ItemStatus::passed),
      item(Source::hidden, "Relu.MatchesOracle", 0, 2, ItemStatus::failed,
           "the last 3 elements were never written", "after_due_date"),
      item(Source::hidden, "Relu.Denormals", 0, 2, ItemStatus::failed, "denormals flushed",
           "after_published"),
      item(Source::hidden, "Relu.Integrity", 0, 0, ItemStatus::failed, "inputs written", "hidden")};
  return one_lab("cleo", l);
}

GradeResult perf_with_plot() {
  LabResult l;
  l.items = {item(Source::visible, "Relu.Tail", 1, 1, ItemStatus::passed), perf_item(2.5, 2.6)};
  l.plots = {{"relu", roofline("lab 01: relu <yours>")}};
  return one_lab("dan", l);
}

GradeResult not_graded_lab() {
  LabResult l;
  l.status = LabStatus::not_graded;
  Item gpu =
      item(Source::visible, "Cuda.Square", 0, 0, ItemStatus::skipped, "Not graded: no CUDA device");
  gpu.details["excluded"] = true;
  l.items = {gpu};
  GradeResult r = one_lab("eve", l);
  LabResult unavailable;
  unavailable.number = "06";
  unavailable.folder = "06_cuda_normalize";
  unavailable.status = LabStatus::unavailable;
  unavailable.notes = {"its trusted parts failed to build in prepare"};
  r.labs.push_back(unavailable);
  return r;
}

const std::vector<std::pair<const char*, GradeResult (*)()>> kResults = {
    {"all passed", all_passed},
    {"build failure", build_failure},
    {"hidden tests", hidden_tests},
    {"perf with a plot", perf_with_plot},
    {"lab not graded", not_graded_lab}};

std::string joined(const std::vector<std::string>& problems) {
  std::string s;
  for (const std::string& p : problems) s += "\n  " + p;
  return s;
}

// --- Gradescope
// -----------------------------------------------------------------------------------

TEST(PlatformFormats, GradescopeResultsFollowGradescopesSpecification) {
  for (const auto& [what, make] : kResults) {
    const json j = gradescope_results(make());
    EXPECT_THAT(gradescope_problems(j), IsEmpty()) << what << joined(gradescope_problems(j));
    // Written and read back as the platform reads it.
    EXPECT_THAT(gradescope_problems(json::parse(j.dump())), IsEmpty()) << what;
  }
}

// Gradescope's leaderboards page (docs/leaderboards.md of gradescope/autograder_samples): a
// top-level array of {name, value, order?}, "asc" for a time, where lower ranks higher.
TEST(PlatformFormats, TheGradescopeLeaderboardHoldsTheCreditedTimesInItsFormat) {
  const json j = gradescope_results(perf_with_plot());
  ASSERT_TRUE(j.contains("leaderboard"));
  EXPECT_THAT(gradescope_problems(j), IsEmpty()) << joined(gradescope_problems(j));
  ASSERT_EQ(j["leaderboard"].size(), 1u) << j["leaderboard"].dump();
  EXPECT_EQ(j["leaderboard"][0]["name"], "lab01 relu (time / reference)");
  EXPECT_EQ(j["leaderboard"][0]["value"], 2.6);
  EXPECT_EQ(j["leaderboard"][0]["order"], "asc");
  GradeResult flagged = perf_with_plot();
  flagged.labs[0].items[1].details["implausible"] = true;
  EXPECT_FALSE(gradescope_results(flagged).contains("leaderboard"))
      << "an implausible time is not credited, and not on the board";
  json wrong = j;
  wrong["leaderboard"][0]["order"] = "ascending";
  wrong["leaderboard"][0]["rank"] = 1;
  EXPECT_EQ(gradescope_problems(wrong).size(), 2u) << joined(gradescope_problems(wrong));
}

TEST(PlatformFormats, TheGradescopeCheckCatchesWhatTheSpecificationRules) {
  json j = gradescope_results(all_passed());
  j["outputformat"] = "md";                  // a typo
  j["stdout_visibility"] = "after_grading";  // not a documented value
  j["tests"][0]["status"] = "skipped";
  j["tests"][0]["number"] = 1;
  j["tests"][1]["score"] = std::nan("");
  j["tests"][2]["output_format"] = "markdown";
  const std::vector<std::string> p = gradescope_problems(j);
  EXPECT_EQ(p.size(), 6u) << joined(p);
}

// --- PrairieLearn
// ---------------------------------------------------------------------------------

TEST(PlatformFormats, PrairieLearnResultsFollowPrairieLearnsDocumentation) {
  for (const auto& [what, make] : kResults) {
    const json j = prairielearn_results(make());
    EXPECT_THAT(prairielearn_problems(j), IsEmpty()) << what << joined(prairielearn_problems(j));
  }
  EXPECT_TRUE(prairielearn_results(all_passed())["gradable"].get<bool>());
  EXPECT_DOUBLE_EQ(prairielearn_results(all_passed())["score"].get<double>(), 1.0);
  EXPECT_FALSE(prairielearn_results(build_failure())["gradable"].get<bool>());
  EXPECT_FALSE(prairielearn_results(not_graded_lab())["gradable"].get<bool>());
  const json broken = prairielearn_results(build_failure());
  EXPECT_THAT(broken["output"].get<std::string>(), HasSubstr("\n    ## Score: 100 / 100\n"))
      << "the compiler's lines quoted, indented";
  EXPECT_EQ(broken["format_errors"][0],
            "lab 01: compile_error (labs/01_vectorized_relu/vector_ops.cpp does not compile)");
  EXPECT_FALSE(broken["tests"][0].contains("output")) << "no empty box for a test with no output";
}

TEST(PlatformFormats, PrairieLearnOutputIsPlainTextAndThePlotsAreImages) {
  const GradeResult r = perf_with_plot();
  const json j = prairielearn_results(r);
  // Shown in a <pre>, escaped (the element's .mustache and ansi2html): text, not Markdown.
  const std::string output = j["output"];
  EXPECT_THAT(output, StartsWith("Score: 3.50 / 6\n"));
  EXPECT_THAT(output, Not(HasSubstr("## "))) << output;
  EXPECT_THAT(output, Not(HasSubstr("`"))) << output;
  EXPECT_THAT(output, HasSubstr("| relu | 2.60x | 35% |")) << "tables stay rows of cells";
  const json& perf = j["tests"][1];
  const std::string test_output = perf["output"];
  EXPECT_THAT(test_output, HasSubstr("Memory-bound: 35% of the copy roof. Next: _mm512_storeu_ps."))
      << test_output;
  ASSERT_EQ(perf["images"].size(), 1u);
  EXPECT_EQ(perf["images"][0]["label"], "Roofline of lab01 perf relu");
  const std::string url = perf["images"][0]["url"];
  ASSERT_THAT(url, StartsWith("data:image/svg+xml;base64,"));
  EXPECT_EQ(unbase64(url.substr(url.find(',') + 1)), r.labs[0].plots[0].second);
  EXPECT_FALSE(j["tests"][0].contains("images")) << "a correctness test has no plot";
}

TEST(PlatformFormats, PrairieLearnWithholdsAHiddenTestsPlotWithItsOutput) {
  GradeResult r = perf_with_plot();
  r.labs[0].items[1].visibility = "after_due_date";
  const json j = prairielearn_results(r);
  EXPECT_FALSE(j["tests"][1].contains("images"));
  EXPECT_FALSE(j["tests"][1].contains("output"));
}

TEST(PlatformFormats, PrairieLearnResultsStayUnderOneMegabyteWhateverThePlots) {
  GradeResult r = perf_with_plot();
  const std::string big = roofline(std::string(100 * 1000, 'x'));  // a title 100 kB long
  for (int k = 0; k < 12; ++k) {
    r.labs[0].items.push_back(perf_item(2.5, 2.6));
    r.labs[0].items.back().test = "case" + std::to_string(k);
    r.labs[0].plots.emplace_back("case" + std::to_string(k), big);
  }
  const json j = prairielearn_results(r);
  EXPECT_THAT(prairielearn_problems(j), IsEmpty()) << joined(prairielearn_problems(j));
  EXPECT_THAT(j["output"].get<std::string>(), HasSubstr("roofline plot(s) left out"));
}

TEST(PlatformFormats, ThePrairieLearnCheckCatchesWhatTheDocumentationRules) {
  json j = prairielearn_results(perf_with_plot());
  j["score"] = 3.5;       // points, not a fraction
  j["gradeable"] = true;  // a typo
  j["format_errors"] = {"given while gradable"};
  j["tests"][0].erase("max_points");
  j["tests"][1]["images"][0]["url"] = "plots/lab01-relu.svg";  // not a data: URL
  j["tests"][1]["images"][0]["caption"] = "x";
  const std::vector<std::string> p = prairielearn_problems(j);
  EXPECT_EQ(p.size(), 6u) << joined(p);
}

// --- GitHub Classroom
// -----------------------------------------------------------------------------

TEST(PlatformFormats, TheClassroomWorkflowFollowsItsActionsInputs) {
  const std::string yml = classroom_workflow(WORKBOOK_TRUSTED, nullptr);
  EXPECT_THAT(classroom_problems(yml), IsEmpty()) << joined(classroom_problems(yml)) << "\n" << yml;
  std::string broken =
      replace_all(yml, "          timeout: 15\n", "          timeout: 15\n          retries: 2\n");
  broken = replace_all(broken, "LAB01_RESULTS", "lab01_RESULTS");
  EXPECT_GE(classroom_problems(broken).size(), 2u) << "the check catches an unknown input and a "
                                                      "misnamed variable";
}

// --- The Markdown renderer
// ------------------------------------------------------------------------

TEST(Markdown, RendersTablesAndCodeAndNoRawHtml) {
  const std::string html = markdown_to_html(
      "## Score\n\n| lab | score |\n|---|---|\n| 01 | 3 / 8 |\n\n```\nerror: <b>\n```\n\n"
      "<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))\n");
  EXPECT_THAT(html, HasSubstr("<h2>Score</h2>"));
  EXPECT_THAT(html, HasSubstr("<td>3 / 8</td>"));
  EXPECT_THAT(html, HasSubstr("<pre><code>error: &lt;b&gt;\n</code></pre>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("javascript:")));
}

TEST(Markdown, RendersPlainTextWithoutMarks) {
  const std::string text =
      markdown_to_text("## Score: 3 / 8\n\n**bold** `code` \\# not a heading &lt;b&gt;\n");
  EXPECT_EQ(text, "Score: 3 / 8\n\nbold code # not a heading <b>\n");
  EXPECT_EQ(markdown_to_text("Lab 01\n\n```\nerror: x\n\n## Score: 100\n```\n"),
            "Lab 01\n\n    error: x\n\n    ## Score: 100\n")
      << "a code block, indented: quoted, not the grader's own lines";
}

// --- The HTML pages
// -------------------------------------------------------------------------------

TEST(Reports, TheHtmlReportIsTheMarkdownRenderedWithItsPlotsInline) {
  const std::string html = html_report(perf_with_plot());
  EXPECT_THAT(html, HasSubstr("<title>Grading report: dan</title>"));
  EXPECT_THAT(html, HasSubstr("<h1>Grading report: dan</h1>"));
  EXPECT_THAT(html, HasSubstr("<th>perf case</th>")) << "the roofline table, a table";
  EXPECT_THAT(html, HasSubstr("<td>failed</td>")) << "the tests' table, a table";
  EXPECT_THAT(html, Not(HasSubstr("|---|"))) << "no Markdown left as text";
  EXPECT_THAT(html, HasSubstr("<figure>\n<svg")) << "the plot inline";
  EXPECT_THAT(html, HasSubstr("<title>lab 01: relu &lt;yours&gt;</title>"));
  EXPECT_THAT(html, Not(HasSubstr("plots/lab01-relu.svg"))) << "no link to a file beside it";
  EXPECT_THAT(markdown_report(perf_with_plot()),
              HasSubstr("![roofline of relu](plots/lab01-relu.svg)\n\n"));
}

TEST(Reports, TheClassSummaryIsTheMarkdownRenderedWithItsPlotsInline) {
  const fs::path out = fs::temp_directory_path() / ("workbook-summary-" + std::to_string(getpid()));
  fs::remove_all(out);
  for (const auto& [what, make] : kResults) {
    const GradeResult r = make();
    write_json(out / "submissions" / r.id / "record.json", r.to_json());
  }
  std::ostringstream log;
  write_summary(out, {}, log);
  const std::string html = read_text(out / "summary.html");
  const std::string md = read_text(out / "summary.md");
  EXPECT_THAT(html, HasSubstr("<h1>Class summary</h1>"));
  EXPECT_THAT(html, HasSubstr("<th>does not build</th>"));
  EXPECT_THAT(html, Not(HasSubstr("<pre"))) << "not the Markdown as text";
  EXPECT_THAT(html, HasSubstr("<title>Scores of 5 submissions</title>"));
  EXPECT_THAT(html, HasSubstr(">score (% of the maximum)</text>"));
  EXPECT_THAT(html, HasSubstr(">submissions</text>")) << "the histogram's y axis";
  EXPECT_THAT(html, HasSubstr("<title>Lab 01: the class on the roofline</title>"));
  EXPECT_THAT(html, HasSubstr("<h2>Anomalies worth a look</h2>"));
  EXPECT_THAT(html, HasSubstr("<h2>Leaderboards</h2>"));
  EXPECT_THAT(read_text(out / "summary" / "leaderboard-lab01.html"),
              HasSubstr("No one on the board yet"))
      << "no one opted in";
  EXPECT_THAT(md, HasSubstr("![score distribution](summary/scores.svg)\n\n"));
  EXPECT_THAT(md, HasSubstr("![lab 01 roofline](summary/lab01-roofline.svg)\n\n"));
  const std::string scores = read_text(out / "summary" / "scores.svg");
  EXPECT_EQ(scores.find("<title>"), scores.find(">\n") + 2) << "the title first in the plot";
  fs::remove_all(out);
}

}  // namespace
