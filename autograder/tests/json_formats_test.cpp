// Files written before the JSON code moved to nlohmann's type macros still read, and are written
// back the same: a ceilings cache (the grader reads it from each perf record) and the rubrics.
#include <grade/rubric.hpp>

#include <workbook/ceilings.hpp>

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

namespace {

// A ceilings cache as format 5 writes it, key for key (format 4's keys: 5 re-measures the FMA and
// int8 peaks of AVX2 machines, which 4's probes had wrong).
const char* kCache = R"({
  "format": 5,
  "machine": {"cpu_model": "Example CPU @ 3.0GHz", "logical_cpus": 8, "simd": "avx2", "simd_bytes": 32,
              "l1d_bytes": 49152, "l2_bytes": 1310720, "l3_bytes": 25165824, "hostname": "lab-pc",
              "compiler": "GCC 12.2.0", "fingerprint": "to be recomputed"},
  "measured_at": "2026-01-01T00:00:00Z", "threads": 8,
  "copy_1t_gbs": 20.5, "copy_regular_1t_gbs": 15.25, "copy_streaming_1t_gbs": 20.5, "copy_all_gbs": 40,
  "triad_1t_gbs": 21, "triad_all_gbs": 41, "read_1t_gbs": 25, "read_all_gbs": 50, "l1_read_1t_gbs": 300,
  "fma_1t_gflops": 96, "fma_all_gflops": 768, "int8_dot_1t_gops": 384, "int8_dot_all_gops": 3072,
  "int8_dot_instruction": "AVX2 vpmaddubsw", "cache_knee_bytes": 67108864, "device": ""
})";

TEST(JsonFormats, ACeilingsCacheReadsAndIsWrittenBackKeyForKey) {
  nlohmann::json written = nlohmann::json::parse(kCache);
  const workbook::Ceilings c = workbook::Ceilings::from_json(written);
  EXPECT_EQ(c.machine.cpu_model, "Example CPU @ 3.0GHz");
  EXPECT_EQ(c.machine.logical_cpus, 8u);
  EXPECT_EQ(c.machine.l3_bytes, 25165824u);
  EXPECT_EQ(c.threads, 8u);
  EXPECT_DOUBLE_EQ(c.copy_regular_1t_gbs, 15.25);
  EXPECT_EQ(c.int8_dot_instruction, "AVX2 vpmaddubsw");
  EXPECT_EQ(c.cache_knee_bytes, 64u << 20);
  written["machine"]["fingerprint"] = c.machine.fingerprint();
  EXPECT_EQ(c.to_json(), written);
}

TEST(JsonFormats, ACeilingsCacheFromBeforeGpusReadsAndOneMissingAFieldDoesNot) {
  nlohmann::json old = nlohmann::json::parse(kCache);
  old.erase("device");
  EXPECT_EQ(workbook::Ceilings::from_json(old).device, "");
  old.erase("fma_1t_gflops");
  EXPECT_THROW(workbook::Ceilings::from_json(old), nlohmann::json::exception);
}

TEST(JsonFormats, EveryLabsRubricStillLoads) {
  int rubrics = 0;
  for (const auto& lab : std::filesystem::directory_iterator(
           std::filesystem::path(WORKBOOK_TRUSTED) / "autograder" / "labs")) {
    const std::filesystem::path file = lab.path() / "rubric.json";
    if (!std::filesystem::exists(file)) continue;
    const std::string number = lab.path().filename().string().substr(0, 2);
    const workbook::grade::Rubric r = workbook::grade::Rubric::load(file.string(), number);
    EXPECT_FALSE(r.rules.empty()) << file;
    const nlohmann::json j = r.to_json();
    EXPECT_EQ(j["skipped"], r.skipped == workbook::grade::SkipPolicy::zero ? "zero" : "exclude")
        << file;
    for (std::size_t i = 0; i < r.rules.size(); ++i)
      EXPECT_EQ(j["rules"][i]["source"], workbook::grade::to_string(r.rules[i].source)) << file;
    ++rubrics;
  }
  EXPECT_GE(rubrics, 6);
}

}  // namespace
