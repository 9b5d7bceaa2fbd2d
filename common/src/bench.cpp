#include <workbook/bench.hpp>

#include <workbook/report.hpp>

#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

namespace workbook {

Bench::Bench(std::string lab, Ceilings ceilings) : lab_(std::move(lab)), ceilings_(std::move(ceilings)) {}

std::vector<Analysis> Bench::compare(const std::string& group, const Work& work,
                                     const std::vector<Version>& versions, const TimingOptions& timing) {
  std::cerr << "  " << group << ": timing " << versions.size() << " version(s) ..." << std::endl;
  std::vector<BatchRunner> runners;
  for (const Version& v : versions) runners.push_back(v.runner ? v.runner : local_runner(v.kernel));
  std::vector<Timing> timings = time_interleaved(runners, timing);
  std::vector<Analysis> analyses;
  for (std::size_t k = 0; k < versions.size(); ++k) {
    analyses.push_back(analyze(versions[k].work.value_or(work), timings[k].summary.median, ceilings_));
    entries_.push_back({group, versions[k].label, versions[k].reference, std::move(timings[k]), analyses.back()});
  }
  return analyses;
}

void Bench::finish(std::ostream& out, const std::filesystem::path& results) const {
  Table table({"kernel", "version", "median", "spread", "GB/s", "G op/s", "% of roof", "roof"});
  nlohmann::json records = nlohmann::json::array();
  std::vector<PlotPoint> points;
  std::vector<Traffic> drawn;
  Compute compute = Compute::fp32;  // the plot's compute roofs: int8 if any entry is int8 work
  std::string previous;
  for (const Entry& e : entries_) {
    const Analysis& a = e.analysis;
    table.add({e.group == previous ? "" : e.group, e.label + (e.reference ? " *" : ""),
               format_seconds(e.timing.summary.median), "+-" + format_percent(e.timing.summary.rel_iqr() / 2),
               format_fixed(a.gbs), format_fixed(a.gops), format_percent(a.fraction_of_roof),
               a.memory_bound_model ? a.roofs.bandwidth_name : a.roofs.compute_name});
    previous = e.group;
    records.push_back({{"group", e.group},
                       {"version", e.label},
                       {"reference", e.reference},
                       {"timing", to_json(e.timing.summary)},
                       {"converged", e.timing.converged},
                       {"analysis", to_json(a)}});
    if (std::find(drawn.begin(), drawn.end(), a.work.traffic) == drawn.end()) drawn.push_back(a.work.traffic);
    if (a.work.compute == Compute::int8) compute = Compute::int8;
    points.push_back({e.group + ": " + e.label, a.intensity, a.gops,
                      e.reference ? PlotPoint::Role::reference : PlotPoint::Role::other});
  }
  out << lab_ << " bench on "
      << (ceilings_.device.empty() ? ceilings_.machine.cpu_model + " (" + ceilings_.machine.simd + ")" : ceilings_.device)
      << "; * = the reference solution\n"
      << table.str();
  const std::filesystem::path folder = results / "bench";
  write_file(folder / (lab_ + ".json"),
             nlohmann::json{{"lab", lab_}, {"ceilings", ceilings_.to_json()}, {"results", records}}.dump(2) + "\n");
  write_file(folder / (lab_ + ".svg"), roofline_svg(ceilings_, points, {.title = lab_ + " bench: every version on the roofline", .bandwidths = drawn, .compute = compute}));
  out << "Records: " << (folder / (lab_ + ".json")).string() << "; plot: " << (folder / (lab_ + ".svg")).string() << "\n";
}

bool parse_bench_arguments(int argc, char** argv, std::string& ceilings, std::filesystem::path& results) {
  ceilings = default_ceilings_path();
  results = results_dir();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ceilings" && i + 1 < argc) {
      ceilings = argv[++i];
    } else if (a == "--results" && i + 1 < argc) {
      results = argv[++i];
    } else {
      std::cerr << "usage: " << argv[0] << " [--ceilings FILE] [--results DIR]\n";
      return false;
    }
  }
  return true;
}

}  // namespace workbook
