#include <workbook/bench.hpp>
#include <workbook/internal/command_line.hpp>

#include <workbook/internal/work_json.hpp>
#include <workbook/report.hpp>
#include <workbook/seed.hpp>
#include <workbook/skip.hpp>

#include <algorithm>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace workbook {

Bench::Bench(std::string lab, Ceilings ceilings)
    : lab_(std::move(lab)), ceilings_(std::move(ceilings)) {}

std::vector<Analysis> Bench::compare(const std::string& group, const Work& work,
                                     const std::vector<Version>& versions,
                                     const TimingOptions& timing) {
  std::cerr << "  " << group << ": timing " << versions.size() << " version(s) ..." << std::endl;
  std::vector<BatchRunner> runners;
  for (const Version& v : versions) runners.push_back(v.runner ? v.runner : local_runner(v.kernel));
  std::vector<Timing> timings = time_interleaved(runners, timing);
  std::vector<Analysis> analyses;
  for (std::size_t k = 0; k < versions.size(); ++k) {
    analyses.push_back(
        analyze(versions[k].work.value_or(work), timings[k].summary.median, ceilings_));
    entries_.push_back({group, versions[k].label, versions[k].reference, versions[k].library,
                        std::move(timings[k]), analyses.back()});
  }
  return analyses;
}

const Analysis& Bench::analysis(const std::string& group, const std::string& label) const {
  for (const Entry& e : entries_)
    if (e.group == group && e.label == label) return e.analysis;
  throw std::out_of_range("the bench timed no '" + label + "' in '" + group + "'");
}

bool Bench::has(const std::string& group, const std::string& label) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& e) { return e.group == group && e.label == label; });
}

void Bench::describe(const std::string& group, const std::string& text) {
  descriptions_.emplace_back(group, text);
}

void Bench::leave_out(const std::string& group, const std::string& label,
                      const std::string& reason) {
  left_out_.push_back({group, label, reason});
}

namespace {

// A group's reference's median, or 0 when the group has none.
double reference_seconds(const std::vector<std::pair<std::string, double>>& references,
                         const std::string& group) {
  for (const auto& [g, seconds] : references)
    if (g == group) return seconds;
  return 0;
}

// How far above its compute roof a row may run before the roof is called wrong: timing noise and
// a clock that boosts past the probe's are a few percent.
constexpr double kAboveTheRoof = 1.15;

// "1.00x", "3.41x": a row's time over its reference's (above 1: slower).
std::string ratio_text(double seconds, double reference) {
  return reference > 0 ? format_fixed(seconds / reference, 2) + "x" : "";
}

}  // namespace

void Bench::finish(std::ostream& out, const std::filesystem::path& results, bool markdown) const {
  const std::vector<std::string> header = {"kernel", "version",   "median", "spread",    "GB/s",
                                           "G op/s", "% of roof", "roof",   "time / ref"};
  std::vector<std::pair<std::string, double>> references;
  for (const Entry& e : entries_)
    if (e.reference && reference_seconds(references, e.group) == 0)
      references.emplace_back(e.group, e.timing.summary.median);
  Table table(header);
  std::ostringstream md;
  md << "|";
  for (const std::string& h : header) md << " " << h << " |";
  md << "\n|";
  for (const std::string& h : header)
    md << (h == "kernel" || h == "version" || h == "roof" ? "---|" : "--:|");
  md << "\n";
  nlohmann::json records = nlohmann::json::array();
  std::vector<PlotPoint> points;
  std::vector<Traffic> drawn;
  Compute compute = Compute::fp32;  // the plot's compute roofs: int8 if any entry is int8 work
  std::string previous;
  for (const Entry& e : entries_) {
    const Analysis& a = e.analysis;
    const double reference = reference_seconds(references, e.group);
    const RooflineCells cells =
        roofline_cells(e.timing.summary, a);  // as every perf table shows them
    const std::vector<std::string> row = {
        e.group == previous ? "" : e.group,
        e.label + (e.reference ? " *" : ""),
        cells.median,
        cells.spread,
        cells.gbs,
        cells.gops,
        cells.of_roof,
        a.memory_bound_model ? a.roofs.bandwidth_name : a.roofs.compute_name,
        ratio_text(e.timing.summary.median, reference)};
    table.add(row);
    md << "|";
    for (const std::string& cell : row) md << " " << cell << " |";
    md << "\n";
    previous = e.group;
    nlohmann::json record = {{"group", e.group},
                             {"version", e.label},
                             {"reference", e.reference},
                             {"work", a.work},
                             {"timing", to_json(e.timing.summary)},
                             {"converged", e.timing.converged},
                             {"analysis", to_json(a)}};
    if (reference > 0) record["time_over_reference"] = e.timing.summary.median / reference;
    records.push_back(std::move(record));
    if (std::find(drawn.begin(), drawn.end(), a.work.traffic) == drawn.end())
      drawn.push_back(a.work.traffic);
    if (a.work.compute == Compute::int8) compute = Compute::int8;
    points.push_back({e.group + ": " + e.label, a.intensity, a.gops,
                      e.reference ? PlotPoint::Role::reference : PlotPoint::Role::other});
  }
  const std::string machine =
      ceilings_.device.empty() ? ceilings_.machine.cpu_model + " (" + ceilings_.machine.simd + ")"
                               : ceilings_.device;
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [group, text] : descriptions_) groups[group] = text;
  // The reference against each library row of its group: speed over the library's, per round.
  nlohmann::json versus = nlohmann::json::array();
  std::ostringstream versus_lines;
  for (const Entry& library : entries_) {
    if (!library.library) continue;
    const auto reference = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
      return e.reference && e.group == library.group;
    });
    if (reference == entries_.end()) continue;
    const Summary speed = ratio_per_round(library.timing, reference->timing);
    versus_lines << (markdown ? "- " : "  ") << library.group << ": the reference runs at "
                 << format_fixed(speed.median, 2) << "x the speed of " << library.label
                 << " (quartiles of " << speed.count
                 << " interleaved rounds: " << format_fixed(speed.q1, 2) << "x to "
                 << format_fixed(speed.q3, 2) << "x)\n";
    versus.push_back({{"group", library.group},
                      {"library", library.label},
                      {"reference", reference->label},
                      {"speed_over_library", speed.median},
                      {"q1", speed.q1},
                      {"q3", speed.q3},
                      {"rounds", speed.count}});
  }
  // No code runs faster than the machine's peak: a row well above its compute roof means the
  // ceilings are wrong (measured while the machine was busy, or a probe the compiler outwitted),
  // and every "% of roof" in the table with them. Said, not hidden: the times stand.
  nlohmann::json warnings = nlohmann::json::array();
  for (const Entry& e : entries_) {
    const Analysis& a = e.analysis;
    if (a.memory_bound_model || a.fraction_of_compute <= kAboveTheRoof) continue;
    warnings.push_back(e.group + ": " + e.label + " ran at " +
                       format_percent(a.fraction_of_compute) + " of the " + a.roofs.compute_name +
                       " measured for this machine (" + format_fixed(a.roofs.compute_gops, 1) +
                       "): that roof is too low, and the table's percentages with it; measure the "
                       "ceilings again on an idle machine (workbook-probe --remeasure, its --cache "
                       "the bench's --ceilings file)");
  }
  // A library left out: no ratio for its group, and the reason instead, where the ratio would be.
  nlohmann::json left_out = nlohmann::json::array();
  for (const LeftOut& l : left_out_) {
    versus_lines << (markdown ? "- " : "  ") << l.group << ": no ratio against " << l.label
                 << ", which " << l.reason << "\n";
    left_out.push_back({{"group", l.group}, {"version", l.label}, {"reason", l.reason}});
  }
  const bool any_library = !versus.empty() || !left_out.empty();
  if (markdown) {
    out << "Measured by `" << lab_ << "_bench --markdown` on " << machine
        << "; * = the reference solution, time / ref = its time over the reference's.\n\n"
        << md.str();
    if (!descriptions_.empty()) out << "\n";
    for (const auto& [group, text] : descriptions_) out << "- `" << group << "`: " << text << "\n";
    if (any_library) out << "\nAgainst the library:\n" << versus_lines.str();
    for (const auto& w : warnings) std::cerr << "Warning: " << w.get<std::string>() << "\n";
  } else {
    out << lab_ << " bench on " << machine << "; * = the reference solution\n" << table.str();
    for (const auto& [group, text] : descriptions_) out << "  " << group << ": " << text << "\n";
    if (any_library) out << "Against the library:\n" << versus_lines.str();
    for (const auto& w : warnings) out << "Warning: " << w.get<std::string>() << "\n";
  }
  const std::filesystem::path folder = results / "bench";
  write_file(folder / (lab_ + ".json"), nlohmann::json{{"lab", lab_},
                                                       {"ceilings", ceilings_.to_json()},
                                                       {"groups", groups},
                                                       {"results", records},
                                                       {"versus_library", versus},
                                                       {"left_out", left_out},
                                                       {"warnings", warnings}}
                                                .dump(2) +
                                            "\n");
  write_file(folder / (lab_ + ".svg"),
             roofline_svg(ceilings_, points,
                          {.title = lab_ + " bench: every version on the roofline",
                           .bandwidths = drawn,
                           .compute = compute}));
  // In Markdown the table alone goes to `out`, ready to paste; where the files went, to stderr.
  (markdown ? std::cerr : out) << "Records: " << (folder / (lab_ + ".json")).string()
                               << "; plot: " << (folder / (lab_ + ".svg")).string() << "\n";
}

std::optional<int> parse_bench_arguments(int argc, char** argv, BenchOptions& options) {
  CLI::App app(
      "Times the lab's perf cases with each numbered version of the kernel in its place, beside "
      "library baselines, against the measured ceilings.");
  app.add_option("--ceilings", options.ceilings,
                 "the machine's ceilings (measured into it if missing)");
  app.add_option("--results", options.results, "where results/bench/LAB.json and LAB.svg go");
  app.add_flag("--markdown", options.markdown, "print the handout's table, in Markdown");
  app.add_option("--max-seconds", options.max_seconds,
                 "the timing cap of each case (shorter: rougher figures)")
      ->check(CLI::PositiveNumber);
  app.add_option("--rounds", options.rounds,
                 "at least this many interleaved rounds per case, past the cap (more: steadier "
                 "ratios)")
      ->check(CLI::Range(3, 100000));
  app.add_flag("--versus-library", options.versus_library,
               "time only the reference and the library baselines: more rounds for the ratio line "
               "(cases without a library are left out)");
  app.add_option("cases", options.cases, "the cases to time (default: all)");
  return parse_command_line(app, argc, argv);
}

namespace {

// A case as the bench runs it: the kernel timed as the case states it, and in its place each
// version the bench lists for the function the case times.
class BenchCase : public perf::Case {
 public:
  BenchCase(std::string name, const std::map<void (*)(), LabBench::Versions>& functions,
            Bench& bench, const TimingOptions& timing, bool versus_library)
      : Case(name, seed_for(name)),
        functions_(functions),
        bench_(bench),
        timing_(timing),
        versus_library_(versus_library) {}

  /// False when --versus-library left the case out: it has no library row (or none was right).
  bool timed() const { return timed_; }

  void measure(const perf::Kernel& kernel) override {
    const BatchRunner base = perf::runner_of(kernel);
    std::string reference_label = "reference";
    for (const LabBench::Versions* v : used_) reference_label = v->reference_label;
    auto clear = [this] {
      for (const LabBench::Versions* v : used_) v->clear();
    };
    std::vector<Bench::Version> rows;
    // Checks a version once (the case's verify, after poisoning the output), then adds its row.
    auto add = [&](const std::string& label, const std::function<void()>& choose, bool checked,
                   bool reference, const std::optional<Work>& own_work, bool library,
                   const std::string& known_wrong) {
      clear();
      choose();
      if (checked) {
        if (kernel.poison) kernel.poison();
        kernel.run();
        if (const CheckResult check = kernel.verify(); !check) {
          if (!library)
            throw std::runtime_error("the bench's " + label + " gave a wrong result in case " +
                                     name() + ":\n" + check.report() +
                                     "Edit the version in solutions/.");
          // A library's wrong answer is its own (or this machine's): no bar for the reference.
          const std::string reason = "gave a wrong result on this machine (" + check.summary + ")" +
                                     (known_wrong.empty() ? "" : ": " + known_wrong);
          std::cerr << "  " << name() << ": " << label << " " << reason
                    << "; left out of the table and the ratio\n";
          bench_.leave_out(name(), label, reason);
          return;
        }
      }
      rows.push_back({label, kernel.run, reference,
                      [base, clear, choose](int count) {
                        clear();
                        choose();
                        return base(count);
                      },
                      own_work, library});
    };
    auto in_this_case = [this](const LabBench::Row& row) {
      return row.cases.empty() ||
             std::find(row.cases.begin(), row.cases.end(), name()) != row.cases.end();
    };
    if (versus_library_) {  // only the reference and the libraries: is there one here?
      bool library = std::any_of(extras().begin(), extras().end(), [](const perf::Extra& e) {
        return e.side == perf::Extra::Side::library;
      });
      for (const LabBench::Versions* v : used_)
        for (const LabBench::Row& row : v->rows)
          library = library || (row.library && in_this_case(row));
      if (!library) {
        std::cerr << "  " << name() << ": no library row to compare with; left out\n";
        return;
      }
    }
    add(
        reference_label, [] {}, true, Bench::kReference, std::nullopt, false, "");
    for (const LabBench::Versions* v : used_)
      for (const LabBench::Row& row : v->rows)
        if (in_this_case(row) && (row.library || !versus_library_))
          add(row.label, row.choose, row.checked, false, row.work, row.library, row.known_wrong);
    // The case's extras: library baselines, and its own kernel run otherwise (on one thread), which
    // here is the reference's.
    for (const perf::Extra& extra : extras()) {
      if (versus_library_ && extra.side != perf::Extra::Side::library) continue;
      std::string label = extra.label;
      if (extra.side == perf::Extra::Side::yours)
        label = "the reference's " + (label.starts_with("your ") ? label.substr(5) : label);
      const BatchRunner runner = perf::runner_of(extra);
      rows.push_back({label, extra.run, false,
                      [runner, clear](int count) {
                        clear();
                        return runner(count);
                      },
                      extra.work, extra.side == perf::Extra::Side::library});
    }
    if (versus_library_ &&
        std::none_of(rows.begin(), rows.end(), [](const Bench::Version& r) { return r.library; })) {
      std::cerr << "  " << name() << ": no library row is left (see above); left out\n";
      return;
    }
    bench_.describe(name(), description());
    bench_.compare(name(), work(), rows, timing_);
    clear();
    timed_ = true;
  }

 protected:
  const void* stand_in(void (*function)(), const std::type_info& signature) override {
    const auto found = functions_.find(function);
    if (found == functions_.end()) return nullptr;
    if (found->second.signature != std::type_index(signature))
      throw std::logic_error("case " + name() +
                             " times a function whose versions in bench.cpp have another type");
    if (std::find(used_.begin(), used_.end(), &found->second) == used_.end())
      used_.push_back(&found->second);
    return found->second.slot.get();
  }

 private:
  const std::map<void (*)(), LabBench::Versions>& functions_;
  Bench& bench_;
  TimingOptions timing_;
  bool versus_library_;
  bool timed_ = false;
  std::vector<const LabBench::Versions*> used_;
};

}  // namespace

LabBench::LabBench(std::string lab, double max_seconds)
    : lab_(std::move(lab)), max_seconds_(max_seconds) {}

int LabBench::main(int argc, char** argv,
                   const std::function<Ceilings(const std::string& path)>& load_ceilings,
                   const std::function<void(Bench&, const BenchOptions&)>& more) const {
  BenchOptions options{
      .ceilings = default_ceilings_path(), .results = results_dir(), .max_seconds = max_seconds_};
  if (const std::optional<int> stop = parse_bench_arguments(argc, argv, options)) return *stop;
  std::vector<perf::Registered> cases = perf::registry();
  for (const perf::Registered& r : perf::bench_registry()) cases.push_back(r);
  for (const std::string& wanted : options.cases)
    if (std::none_of(cases.begin(), cases.end(),
                     [&](const perf::Registered& r) { return r.name == wanted; })) {
      std::cerr << lab_ << "_bench: no case named '" << wanted
                << "'; the cases are those of the lab's "
                << "tests/perf_cases.cpp\n";
      return 2;
    }
  try {
    Bench bench(lab_, load_ceilings ? load_ceilings(options.ceilings)
                                    : load_or_measure_ceilings(options.ceilings, false,
                                                               [](const std::string& line) {
                                                                 std::cerr << "  " << line << "\n";
                                                               }));
    const TimingOptions timing{.max_seconds = options.max_seconds, .min_rounds = options.rounds};
    std::size_t run = 0, compared = 0;  // cases run; of those, timed against a library
    std::string skipped;                // the last skip's message ("no CUDA device: skipped")
    for (const perf::Registered& r : cases) {
      if (!options.cases.empty() &&
          std::find(options.cases.begin(), options.cases.end(), r.name) == options.cases.end())
        continue;
      try {
        BenchCase c(r.name, functions_, bench, timing, options.versus_library);
        r.function(c);
        ++run;
        if (c.timed()) ++compared;
      } catch (const Skipped& e) {
        std::cerr << "  " << r.name << ": " << e.what() << "\n";
        skipped = e.what();
      }
    }
    if (run == 0 && !skipped.empty()) {
      std::cout << skipped << "\n";
      return kSkipReturnCode;
    }
    if (options.versus_library && compared == 0 && bench.left_out_any()) {
      std::cerr << lab_ << "_bench --versus-library: every library baseline of the cases timed "
                << "gave a wrong result on this machine (said above), so there is no ratio to "
                << "give\n";
      return 2;
    }
    if (options.versus_library && compared == 0) {
      std::cerr << lab_ << "_bench --versus-library: no case timed has a library baseline in this "
                << "build (the lab's tests/perf_cases.cpp adds one when CMake finds the library; "
                << "see the handout's bench section for which), so there is no ratio to give\n";
      return 2;
    }
    bench.finish(std::cout, options.results, options.markdown);
    if (more && !options.versus_library) more(bench, options);
    return 0;
  } catch (const Skipped& e) {
    std::cout << e.what() << "\n";
    return kSkipReturnCode;
  }
}

}  // namespace workbook
