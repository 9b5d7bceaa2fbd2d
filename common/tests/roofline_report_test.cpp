// Roofline arithmetic, the ceilings cache, and the report formats.
#include <workbook/bench.hpp>
#include <workbook/ceilings.hpp>
#include <workbook/internal/perf_verdict.hpp>
#include <workbook/report.hpp>
#include <workbook/roofline.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include <unistd.h>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A runner whose every run "takes" `seconds`: Bench's arithmetic on timings it controls.
workbook::BatchRunner fixed_times(double seconds) {
  return [seconds](int count) { return std::vector<double>(std::size_t(count), seconds); };
}
void nothing() {}

// Round numbers, so the arithmetic can be checked by hand.
workbook::Ceilings example_ceilings() {
  workbook::Ceilings c;
  c.machine = workbook::machine_info();
  c.measured_at = "2026-01-01T00:00:00Z";
  c.threads = 2;
  c.copy_1t_gbs = 50;
  c.copy_regular_1t_gbs = 40;
  c.copy_streaming_1t_gbs = 50;
  c.copy_all_gbs = 80;
  c.triad_1t_gbs = 52;
  c.triad_all_gbs = 85;
  c.read_1t_gbs = 60;
  c.read_all_gbs = 95;
  c.l1_read_1t_gbs = 400;
  c.fma_1t_gflops = 200;
  c.fma_all_gflops = 400;
  c.int8_dot_1t_gops = 500;
  c.int8_dot_all_gops = 1000;
  c.int8_dot_instruction = "test";
  c.cache_knee_bytes = 64 << 20;
  return c;
}

TEST(Roofline, MemoryBoundKernel) {
  // 1 GFLOP over 8 GB in 0.2 s: 40 GB/s of a 50 GB/s roof.
  const workbook::Work work{.ops = 1e9, .bytes = 8e9};
  const workbook::Analysis a = workbook::analyze(work, 0.2, example_ceilings());
  EXPECT_DOUBLE_EQ(a.gbs, 40);
  EXPECT_DOUBLE_EQ(a.gops, 5);
  EXPECT_DOUBLE_EQ(a.intensity, 0.125);
  EXPECT_DOUBLE_EQ(a.roofs.ridge(), 4);
  EXPECT_TRUE(a.memory_bound_model);
  EXPECT_DOUBLE_EQ(a.attainable_gops, 6.25);
  EXPECT_DOUBLE_EQ(a.fraction_of_roof, 0.8);
  EXPECT_DOUBLE_EQ(a.fraction_of_bandwidth, 0.8);
  EXPECT_EQ(a.bound, workbook::Bound::memory);
  EXPECT_FALSE(a.at_roofline);
  EXPECT_DOUBLE_EQ(workbook::roofline_seconds(work, example_ceilings()), 0.16);
  EXPECT_THAT(
      workbook::verdict(a),
      HasSubstr("memory-bound work (intensity 0.125 FLOP/B, ridge 4): 80% of copy, 1 thread"));
}

TEST(Roofline, ComputeBoundAndUnderutilized) {
  // 2 GFLOP over 1 MB: intensity 2000, far right of the ridge. 0.02 s = 100 GFLOP/s = 50% of peak.
  const workbook::Work work{.ops = 2e9, .bytes = 1e6};
  const workbook::Analysis a = workbook::analyze(work, 0.02, example_ceilings());
  EXPECT_FALSE(a.memory_bound_model);
  EXPECT_DOUBLE_EQ(a.fraction_of_compute, 0.5);
  EXPECT_EQ(a.bound, workbook::Bound::underutilized);
  const workbook::Analysis fast = workbook::analyze(work, 0.0105, example_ceilings());
  EXPECT_EQ(fast.bound, workbook::Bound::compute);
  EXPECT_TRUE(fast.at_roofline);
}

TEST(Roofline, LevelAndThreadsPickTheRoofs) {
  const auto c = example_ceilings();
  const auto l1 = workbook::roofs_for({.ops = 1, .bytes = 1, .traffic = workbook::Traffic::l1}, c);
  EXPECT_DOUBLE_EQ(l1.bandwidth_gbs, 400);
  EXPECT_EQ(l1.bandwidth_name, "L1 loads, 1 core");
  const auto all = workbook::roofs_for({.ops = 1, .bytes = 1, .threads = 2}, c);
  EXPECT_DOUBLE_EQ(all.bandwidth_gbs, 80);
  EXPECT_DOUBLE_EQ(all.compute_gops, 400);
  const auto l1_all = workbook::roofs_for(
      {.ops = 1, .bytes = 1, .traffic = workbook::Traffic::l1, .threads = 2}, c);
  EXPECT_DOUBLE_EQ(l1_all.bandwidth_gbs, 800);  // each core has its own L1
  EXPECT_DOUBLE_EQ(
      workbook::roofs_for({.ops = 1, .bytes = 1, .traffic = workbook::Traffic::triad}, c)
          .bandwidth_gbs,
      52);
  EXPECT_DOUBLE_EQ(
      workbook::roofs_for({.ops = 1, .bytes = 1, .traffic = workbook::Traffic::read}, c)
          .bandwidth_gbs,
      60);
  EXPECT_EQ(workbook::traffic_from_string("triad"), workbook::Traffic::triad);
  const auto int8 =
      workbook::roofs_for({.ops = 1, .bytes = 1, .compute = workbook::Compute::int8}, c);
  EXPECT_DOUBLE_EQ(int8.compute_gops, 500);
  EXPECT_EQ(int8.compute_name, "int8 dot peak, 1 core");
  EXPECT_EQ(workbook::compute_from_string("int8"), workbook::Compute::int8);
  EXPECT_THROW(workbook::traffic_from_string("dram"), std::invalid_argument);
}

TEST(Roofline, RejectsUnmeasuredCeilingsAndNonPositiveTimes) {
  EXPECT_THROW(workbook::roofs_for({.ops = 1, .bytes = 1}, workbook::Ceilings{}),
               std::invalid_argument);
  EXPECT_THROW(workbook::analyze({.ops = 1, .bytes = 1}, 0.0, example_ceilings()),
               std::invalid_argument);
}

TEST(Roofline, NextStepPrefersTheLowestMatchingHint) {
  const std::vector<workbook::Hint> hints = {{0.5, "vectorise"}, {0.9, "streaming stores"}};
  const workbook::Work work{.ops = 1e9, .bytes = 8e9};
  EXPECT_EQ(workbook::next_step(workbook::analyze(work, 0.5, example_ceilings()), hints),
            "vectorise");
  EXPECT_EQ(workbook::next_step(workbook::analyze(work, 0.2, example_ceilings()), hints),
            "streaming stores");
  EXPECT_THAT(workbook::next_step(workbook::analyze(work, 0.165, example_ceilings()), hints),
              HasSubstr("at the roofline"));
  EXPECT_THAT(workbook::next_step(workbook::analyze(work, 0.5, example_ceilings()), {}),
              HasSubstr("Neither roof binds"));
}

TEST(Ceilings, JsonRoundTripAndMachineCheck) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("ceilings-test-" + std::to_string(::getpid()) + ".json");
  workbook::save_ceilings(path.string(), example_ceilings());
  const auto loaded = workbook::load_ceilings(path.string());
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->to_json(), example_ceilings().to_json());
  // Measured elsewhere: not valid here.
  workbook::Ceilings other = example_ceilings();
  other.machine.cpu_model = "another CPU";
  workbook::save_ceilings(path.string(), other);
  EXPECT_FALSE(workbook::load_ceilings(path.string()).has_value());
  // Damaged, or an old format: re-measured rather than fatal.
  std::ofstream(path) << "{ not json";
  EXPECT_FALSE(workbook::load_ceilings(path.string()).has_value());
  nlohmann::json old = example_ceilings().to_json();
  old["format"] = 0;
  std::ofstream(path) << old.dump();
  EXPECT_FALSE(workbook::load_ceilings(path.string()).has_value());
  std::filesystem::remove(path);
  EXPECT_FALSE(workbook::load_ceilings(path.string()).has_value());
}

TEST(Report, FormatsTimesAndPercentages) {
  EXPECT_EQ(workbook::format_seconds(0.0112), "11.2 ms");
  EXPECT_EQ(workbook::format_seconds(5.32e-4), "532 us");
  EXPECT_EQ(workbook::format_seconds(1.234), "1.23 s");
  EXPECT_EQ(workbook::format_seconds(4.5e-8), "45 ns");
  EXPECT_EQ(workbook::format_percent(0.794), "79%");
  EXPECT_EQ(workbook::format_fixed(3.14159, 2), "3.14");
  EXPECT_EQ(workbook::format_ratio(1.214), "1.21x");
  EXPECT_EQ(workbook::format_ratio(0.00312), "0.0031x");  // not "0.00x"
  EXPECT_EQ(workbook::format_ratio(0), "0.00x");
}

TEST(Report, OneFormatterForAKernelsRooflineRow) {
  // 40 GB/s and 5 GFLOP/s, 80% of the roof, in 0.2 s with a spread of +-5%.
  const workbook::Analysis a =
      workbook::analyze({.ops = 1e9, .bytes = 8e9}, 0.2, example_ceilings());
  const workbook::Summary s{
      .count = 9, .min = 0.18, .q1 = 0.19, .median = 0.2, .q3 = 0.21, .max = 0.3};
  const workbook::RooflineCells c = workbook::roofline_cells(s, a);
  EXPECT_EQ(c.median, "200 ms");
  EXPECT_EQ(c.spread, "+-5%");
  EXPECT_EQ(c.gbs, "40.0");
  EXPECT_EQ(c.gops, "5.00");  // two decimals under 10
  EXPECT_EQ(c.of_roof, "80%");
  EXPECT_EQ(workbook::roofline_cells(
                s, workbook::analyze({.ops = 1e10, .bytes = 8e9}, 0.2, example_ceilings()))
                .gops,
            "50.0");
}

TEST(Report, AnalysisSummaryAndWorkReadBackFromTheirRecords) {
  const workbook::Work work{.ops = 1e9,
                            .bytes = 8e9,
                            .traffic = workbook::Traffic::triad,
                            .threads = 2,
                            .compute = workbook::Compute::int8,
                            .ops_unit = "OP"};
  const workbook::Analysis a = workbook::analyze(work, 0.2, example_ceilings());
  const nlohmann::json record = workbook::to_json(a);
  const auto back = record.get<workbook::Analysis>();
  EXPECT_EQ(workbook::to_json(back), record);
  EXPECT_EQ(back.work.traffic, workbook::Traffic::triad);
  EXPECT_EQ(back.roofs.bandwidth_name, a.roofs.bandwidth_name);
  EXPECT_EQ(back.bound, a.bound);
  EXPECT_EQ(nlohmann::json(work)["traffic"], "triad");
  EXPECT_EQ(nlohmann::json(work).get<workbook::Work>().ops_unit, "OP");
  const workbook::Summary s{
      .count = 3, .min = 1, .q1 = 1.5, .median = 2, .q3 = 2.5, .max = 3, .mean = 2, .stddev = 1};
  EXPECT_EQ(workbook::to_json(workbook::to_json(s).get<workbook::Summary>()), workbook::to_json(s));
}

TEST(Report, TableAlignsColumns) {
  workbook::Table t({"name", "value"});
  t.add({"a", "1.5"});
  t.add({"longer", "10.25"});
  EXPECT_EQ(t.str(),
            "  name    value\n"
            "  -------------\n"
            "  a         1.5\n"
            "  longer  10.25\n");
}

TEST(Report, RooflineSvgIsWellFormedAndLabelled) {
  const std::string svg =
      workbook::roofline_svg(example_ceilings(),
                             {{"you & me", 0.125, 5, workbook::PlotPoint::Role::student},
                              {"reference", 0.125, 6, workbook::PlotPoint::Role::reference}},
                             {.title = "lab <01>"});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("</svg>\n"));
  EXPECT_THAT(svg, HasSubstr("lab &lt;01&gt;"));
  EXPECT_THAT(svg, HasSubstr("<title>lab &lt;01&gt;</title>")) << "its accessible name";
  EXPECT_THAT(svg, HasSubstr(">arithmetic intensity (FLOP per byte)</text>")) << "the x axis";
  EXPECT_THAT(svg, HasSubstr(">GFLOP/s</text>")) << "the y axis";
  EXPECT_THAT(svg, HasSubstr("you &amp; me"));
  EXPECT_THAT(svg, HasSubstr("copy, 1 thread 50.0 GB/s"));
  EXPECT_THAT(svg, HasSubstr("FMA peak, 1 core 200.0 GFLOP/s"));
  EXPECT_THAT(svg, HasSubstr("ridge 4.0"));
  // As many opening as closing text elements: nothing left unterminated.
  std::size_t open = 0, close = 0;
  for (std::size_t p = svg.find("<text"); p != std::string::npos; p = svg.find("<text", p + 1))
    ++open;
  for (std::size_t p = svg.find("</text>"); p != std::string::npos; p = svg.find("</text>", p + 1))
    ++close;
  EXPECT_EQ(open, close);
}

TEST(Bench, AVersionWithItsOwnWorkIsPlacedAgainstItsOwnRoof) {
  // An fp32 baseline timed in a group of int8 kernels: its point uses the FMA roof, theirs the int8
  // one.
  workbook::Bench bench("test", example_ceilings());
  const workbook::Work int8{
      .ops = 1e6, .bytes = 1e3, .compute = workbook::Compute::int8, .ops_unit = "OP"};
  const workbook::Work fp32{.ops = 1e6, .bytes = 4e3};
  volatile unsigned sink = 0;
  auto spin = [&] {
    for (unsigned i = 0; i < 1000; ++i) sink = sink + i;
  };
  const auto analyses = bench.compare(
      "product", int8,
      {{"int8 kernel", spin, workbook::Bench::kReference},
       {.label = "fp32 baseline", .kernel = spin, .work = fp32}},
      {.warmup_seconds = 0, .min_runs = 3, .max_seconds = 0.01, .batch_seconds = 0.001});
  ASSERT_EQ(analyses.size(), 2u);
  EXPECT_EQ(analyses[0].work.compute, workbook::Compute::int8);
  EXPECT_DOUBLE_EQ(analyses[0].roofs.compute_gops, 500);
  EXPECT_EQ(analyses[1].work.compute, workbook::Compute::fp32);
  EXPECT_DOUBLE_EQ(analyses[1].roofs.compute_gops, 200);
  EXPECT_DOUBLE_EQ(analyses[1].work.bytes, 4e3);
}

TEST(Bench, SaysTheReferencesSpeedOverTheLibraryInOneLine) {
  workbook::Bench bench("test", example_ceilings());
  bench.compare(
      "matmul", {.ops = 1e6, .bytes = 1e3},
      {{.label = "v5", .kernel = nothing, .reference = true, .runner = fixed_times(1e-3)},
       {.label = "v1", .kernel = nothing, .runner = fixed_times(9e-3)},
       {.label = "OpenBLAS", .kernel = nothing, .runner = fixed_times(1.25e-3), .library = true}},
      {.warmup_seconds = 0, .min_runs = 3, .max_seconds = 0.01});
  const auto folder = std::filesystem::temp_directory_path() /
                      ("workbook-bench-test-" + std::to_string(::getpid()));
  std::ostringstream out;
  bench.finish(out, folder);
  EXPECT_THAT(out.str(), HasSubstr("matmul: the reference runs at 1.25x the speed of OpenBLAS "
                                   "(quartiles of "));
  EXPECT_THAT(out.str(), Not(HasSubstr("speed of v1")));  // v1 is no library
  std::ifstream record(folder / "bench" / "test.json");
  const nlohmann::json json = nlohmann::json::parse(record);
  ASSERT_EQ(json.at("versus_library").size(), 1u);
  EXPECT_DOUBLE_EQ(json.at("versus_library")[0].at("speed_over_library").get<double>(), 1.25);
  EXPECT_EQ(json.at("versus_library")[0].at("library"), "OpenBLAS");
  std::filesystem::remove_all(folder);
}

TEST(Bench, WarnsWhenARowRunsAboveItsComputeRoof) {
  // The FMA roof is 200 GFLOP/s: 1e6 FLOP in 2 us is 500, more than the machine can do, so the
  // ceilings are wrong; 1e6 in 10 us is 100, below it.
  workbook::Bench bench("test", example_ceilings());
  bench.compare("matmul", {.ops = 1e6, .bytes = 1e3},
                {{.label = "v5", .kernel = nothing, .reference = true, .runner = fixed_times(2e-6)},
                 {.label = "v1", .kernel = nothing, .runner = fixed_times(1e-5)}},
                {.warmup_seconds = 0, .min_runs = 3, .max_seconds = 0.01});
  const auto folder = std::filesystem::temp_directory_path() /
                      ("workbook-bench-warn-test-" + std::to_string(::getpid()));
  std::ostringstream out;
  bench.finish(out, folder);
  EXPECT_THAT(out.str(), HasSubstr("Warning: matmul: v5 ran at 250% of the FMA peak, 1 core "
                                   "measured for this machine (200.0): that roof is too low"));
  EXPECT_THAT(out.str(), Not(HasSubstr("matmul: v1 ran at")));
  std::ifstream record(folder / "bench" / "test.json");
  EXPECT_EQ(nlohmann::json::parse(record).at("warnings").size(), 1u);
  std::filesystem::remove_all(folder);
}

TEST(Report, XmlEscapeEscapesMarkup) {
  EXPECT_EQ(workbook::xml_escape(R"(a < b && "c" > d)"),
            "a &lt; b &amp;&amp; &quot;c&quot; &gt; d");
}

TEST(Report, RooflineSvgScatterDrawsOthersAsUnlabelledDots) {
  // A class scatter (the autograder's summary): many submissions, none of them named in a key.
  std::vector<workbook::PlotPoint> points = {
      {"reference relu", 0.125, 6, workbook::PlotPoint::Role::reference}};
  for (int i = 0; i < 50; ++i)
    points.push_back(
        {"student " + std::to_string(i), 0.125, 1.0 + 0.1 * i, workbook::PlotPoint::Role::other});
  const std::string svg =
      workbook::roofline_svg(example_ceilings(), points, {.title = "class", .label_others = false});
  EXPECT_THAT(svg, HasSubstr("reference relu"));
  EXPECT_THAT(svg, Not(HasSubstr("student 7")));
  std::size_t dots = 0;
  for (std::size_t p = svg.find("fill-opacity=\"0.45\""); p != std::string::npos;
       p = svg.find("fill-opacity=\"0.45\"", p + 1))
    ++dots;
  EXPECT_EQ(dots, 50u);
}

}  // namespace
