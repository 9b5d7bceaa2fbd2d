#pragma once
/// \file result.hpp
/// \brief What grading a submission produces: one Item per graded test, one LabResult per lab, and
/// the GradeResult of the whole submission (record.json). Every stage of the pipeline fills a part
/// of it; the reporters (report.hpp) only read it.

#include <grade/rubric.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace workbook::grade {

/// What became of one graded test. Serialised as today's strings ("not_run", "passed", ...):
/// results.json, record.json and the gradebook keep them.
enum class ItemStatus {
  not_run,  ///< not run yet (every item starts so)
  passed,
  failed,
  skipped,  ///< not graded here: the test skipped itself (no GPU), or perf did not run
};
NLOHMANN_JSON_SERIALIZE_ENUM(ItemStatus, {{ItemStatus::not_run, "not_run"},
                                          {ItemStatus::passed, "passed"},
                                          {ItemStatus::failed, "failed"},
                                          {ItemStatus::skipped, "skipped"}})
const char* to_string(ItemStatus status);

/// What became of one lab.
enum class LabStatus {
  graded,
  not_graded,     ///< nothing could run here: every test skipped itself (a GPU lab without a GPU)
  not_submitted,  ///< a required file is missing or refused
  compile_error,
  symbol_error,  ///< it defines symbols a submission may not define (the audit)
  link_error,
  unavailable,        ///< the trusted build of this lab failed, or left it out on this machine
  environment_error,  ///< the grader's machine failed a run (an isolation layer, a cgroup): not
                      ///< the student's, graded again once the machine is fixed
};
NLOHMANN_JSON_SERIALIZE_ENUM(LabStatus, {{LabStatus::graded, "graded"},
                                         {LabStatus::not_graded, "not_graded"},
                                         {LabStatus::not_submitted, "not_submitted"},
                                         {LabStatus::compile_error, "compile_error"},
                                         {LabStatus::symbol_error, "symbol_error"},
                                         {LabStatus::link_error, "link_error"},
                                         {LabStatus::unavailable, "unavailable"},
                                         {LabStatus::environment_error, "environment_error"}})
const char* to_string(LabStatus status);

/// One graded test: a line of results.json.
struct Item {
  std::string lab;  ///< "01"
  Source source = Source::visible;
  std::string test;      ///< "Relu.InPlace", or the perf case "relu"
  std::string function;  ///< what it grades ("relu")
  double score = 0;
  double max_score = 0;
  ItemStatus status = ItemStatus::not_run;
  std::string output;  ///< Markdown, for the student
  std::string visibility = "visible";
  bool gate = false;
  bool forfeit =
      false;  ///< an integrity check: failing it forfeits the function (see Rule::forfeit)
  double seconds = 0;
  nlohmann::json details = nlohmann::json::object();  ///< perf figures, flags

  std::string name()
      const;  ///< "lab01 Relu.InPlace", "lab01 hidden Relu.InPlace", "lab01 perf relu"
};

/// The exit code of `grade` when the submission was graded but a lab it asked for could not be
/// graded on this machine (not buildable here, or every test skipped itself: a GPU lab without a
/// GPU).
inline constexpr int kExitLabsNotGraded = 3;
/// The exit code of `batch` when some submissions could not be graded (grader errors: the log
/// says how many; a re-run retries them). Never a count, which could read as another code.
inline constexpr int kExitSubmissionsNotGraded = 1;

struct LabResult {
  std::string number, folder, title;
  LabStatus status = LabStatus::graded;
  std::string
      build_output;  ///< the compiler's or linker's first errors, paths as the student sees them
  double score = 0, max_score = 0;
  std::vector<Item> items;
  double seconds = 0;
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, std::string>> plots;  ///< perf case -> SVG roofline
  /// The rubric's settings that decide outcomes (limits, timing budget; see rescore.hpp), as the
  /// lab was graded: a later re-score compares them with the rubric of the day.
  nlohmann::json graded_with;
};

struct SubmittedFile {
  std::string path;  ///< labs/01_vectorized_relu/vector_ops.cpp
  std::uint64_t bytes = 0;
  std::string hash;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SubmittedFile, path, bytes, hash)

struct GradeResult {
  std::string id;
  std::string submission;
  std::string started_at;
  double seconds = 0;
  double score = 0, max_score = 0;
  std::uint64_t seed = 0;
  std::string cache_key;
  nlohmann::json isolation;
  nlohmann::json
      ceilings;  ///< the machine's ceilings the perf cases were judged by (for class plots)
  std::vector<SubmittedFile> files;
  std::vector<LabResult> labs;
  std::vector<std::string> warnings;  ///< for the instructor (not for the student)
  /// The student's name for the class leaderboard (leaderboard.txt); empty: not on it.
  std::string leaderboard_name;

  nlohmann::json to_json() const;
  static GradeResult from_json(const nlohmann::json& j);
};

// record.json's objects (ADL, for nlohmann::json's get<> and assignment).
void to_json(nlohmann::json& j, const Item& item);
void from_json(const nlohmann::json& j, Item& item);
void to_json(nlohmann::json& j, const LabResult& lab);
void from_json(const nlohmann::json& j, LabResult& lab);

}  // namespace workbook::grade
