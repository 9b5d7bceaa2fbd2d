#pragma once
/// \file bench.hpp
/// \brief A lab's bench: the lab's perf spec (labs/NN/tests/perf_cases.cpp) timed with each
/// numbered version of the kernel in the kernel's place, beside library baselines, every one
/// against the measured ceilings, as a table (or the handout's table in Markdown), a JSON record
/// and a roofline plot. The sizes, inputs and work models are the perf cases' own: the bench adds
/// only versions.
///
/// \code
/// int main(int argc, char** argv) {
///   workbook::LabBench bench("lab01");
///   // Wherever a case times lab01::relu (perf.timed(lab01::relu)), time these in its place too.
///   bench.versions(lab01::relu, "v4 streaming stores",
///                  {{"v1 scalar", versions::relu_v1_scalar},
///                   {"copy (the probe's kernel)", workbook::copy_streaming,
///                   workbook::kBaseline}});
///   return bench.main(argc, argv);
/// }
/// \endcode
///
/// The versions of one case are timed interleaved (time_interleaved), so that a burst of noise on
/// a shared machine slows them all alike instead of one of them.

#include <workbook/ceilings.hpp>
#include <workbook/roofline.hpp>
#include <workbook/timing.hpp>

#include <workbook/perf.hpp>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <typeindex>
#include <vector>

namespace workbook {

/// A lab's benchmark: groups of kernel versions timed against one set of ceilings, collected into
/// one table, one JSON record and one roofline plot (finish()).
class Bench {
 public:
  /// \param lab      names the outputs ("lab01": `lab01.json`, `lab01.svg`) and the table's title
  /// \param ceilings the roofs every version is placed against (measured once, before any timing)
  Bench(std::string lab, Ceilings ceilings);

  /// For a Version's initializer: `{"v4", run, Bench::kReference}` says more than `true`.
  static constexpr bool kReference = true;
  /// One version of a kernel: its label, one call of it, and whether it is the reference solution.
  struct Version {
    /// The row's name in the table and its point on the plot, e.g. "v1 scalar".
    std::string label;
    std::function<void()> kernel;  ///< one call of the version, on inputs the bench owns
    /// The reference solution: starred in the table, highlighted on the plot.
    bool reference = false;
    /// How to time it; empty: the host clock around each call. GPU benches pass
    /// workbook::cuda::gpu_runner(kernel) (the GPU's own timestamps, L2 flushed before each run).
    BatchRunner runner = {};
    /// This version's own work, when it differs from the group's: an fp32 baseline timed beside
    /// int8 kernels is placed against the FMA roof, not the int8 one.
    std::optional<Work> work = std::nullopt;
    /// The library a user would call instead (OpenBLAS, OpenMP): finish() gives the reference's
    /// speed over it in one line per group, and in the JSON record.
    bool library = false;
  };

  /// Times the versions of one kernel, each doing `work` per call (or its own Version::work),
  /// interleaved, and adds them to the table under `group` (the kernel and its size). Returns where
  /// each landed on the roofline.
  std::vector<Analysis> compare(const std::string& group, const Work& work,
                                const std::vector<Version>& versions,
                                const TimingOptions& timing = {.max_seconds = 1.0});

  /// A line about `group` (the case's description), under the table and in the JSON record.
  void describe(const std::string& group, const std::string& text);

  /// Records that `label` of `group` was not timed, and why (a library baseline that gave a wrong
  /// result on this machine): said under the table, in place of the group's ratio line when it was
  /// the library, and in the JSON record under "left_out".
  void leave_out(const std::string& group, const std::string& label, const std::string& reason);
  /// True when leave_out was called.
  bool left_out_any() const { return !left_out_.empty(); }

  /// Prints the table to `out` (in Markdown with `markdown`: the handout's table), then one line
  /// per group that has a reference and a library row: the reference's speed over the library's,
  /// with the quartiles of the interleaved rounds; and writes `results/bench/LAB.json` (every
  /// timing and analysis, with the ceilings, and those ratios under "versus_library") and
  /// `results/bench/LAB.svg` (the roofline plot), creating the folder. Each row's time is also
  /// given over its group's reference's. A row more than 15% above its compute roof gets a warning
  /// (after the table, or on stderr with `markdown`; "warnings" in the record): the measured
  /// ceilings are then wrong. Throws std::runtime_error when a file cannot be written.
  void finish(std::ostream& out, const std::filesystem::path& results, bool markdown = false) const;

  /// Where `label` of `group` landed (as compare() returned it); throws std::out_of_range when no
  /// such row was timed.
  const Analysis& analysis(const std::string& group, const std::string& label) const;
  /// True when `group` has a row `label`.
  bool has(const std::string& group, const std::string& label) const;

  /// The roofs given at construction, for a bench that sizes its work by them (`threads`).
  const Ceilings& ceilings() const { return ceilings_; }

 private:
  struct Entry {
    std::string group, label;
    bool reference, library;
    Timing timing;
    Analysis analysis;
  };
  std::string lab_;
  Ceilings ceilings_;
  std::vector<Entry> entries_;
  std::vector<std::pair<std::string, std::string>> descriptions_;  // group, text
  struct LeftOut {
    std::string group, label, reason;
  };
  std::vector<LeftOut> left_out_;
};

/// What a bench's command line sets.
struct BenchOptions {
  std::string ceilings;           ///< --ceilings FILE (default: the tests' cache)
  std::filesystem::path results;  ///< --results DIR (default: as for the tests)
  bool markdown = false;          ///< --markdown: print the handout's table
  double max_seconds = 1.0;       ///< --max-seconds: the timing cap of each case
  /// --versus-library: time only the reference and the library baselines, so that the rounds the
  /// cap allows go to the ratio between them (the slow numbered versions take most of a round).
  bool versus_library = false;
  int rounds = 3;  ///< --rounds: at least this many interleaved rounds per case, whatever the cap
  std::vector<std::string> cases;  ///< the cases to time (default: all)
};

/// Parses a bench's command line (CLI11): `[--ceilings FILE] [--results DIR] [--markdown]
/// [--max-seconds S] [--rounds N] [--versus-library] [CASE...]`; an unknown option is an error.
/// Returns an exit code when the program should stop there (0 after --help, 2 after a usage error,
/// printed), else nothing. `options` comes filled with the defaults, which the command line
/// overrides.
std::optional<int> parse_bench_arguments(int argc, char** argv, BenchOptions& options);

/// A bench row that is not the kernel: a baseline of another computation (a copy of the same
/// bytes), timed for scale and not checked. See LabBench::Version::checked.
inline constexpr bool kBaseline = false;

/// A lab's bench on its perf spec: runs every case of the lab (WORKBOOK_PERF_CASE, then
/// WORKBOOK_BENCH_CASE) once, and where a case times a function through Case::timed, times the
/// function's numbered versions in its place too, interleaved, on the same inputs, beside the
/// case's extras (library baselines). Each version is first checked with the case's own verify.
class LabBench {
 public:
  /// \param lab         names the outputs and the tables ("lab01")
  /// \param max_seconds the default timing cap of each case (--max-seconds overrides it)
  explicit LabBench(std::string lab, double max_seconds = 1.0);

  /// A version of a kernel, called in the kernel's place with the kernel's arguments.
  template <class Signature>
  struct Version {
    std::string label;                  ///< its row in the table and its point on the plot
    std::function<Signature> function;  ///< a numbered version, or an adapter to a library call
    /// It computes what the kernel does: checked with the case's verify before it is timed.
    /// kBaseline (false) for another computation timed for scale, such as a copy.
    bool checked = true;
    /// Only in these cases (their registered names); empty: every case that times the kernel.
    std::vector<std::string> cases;
    /// Its own work, for a baseline that does other work than the case's (an fp32 product beside
    /// int8 ones, a copy of other bytes); empty: the case's.
    std::optional<Work> work;
    /// A library's implementation (OpenMP's loop, a BLAS): see Bench::Version::library. A library
    /// row that fails the case's check is left out, said on stderr and in the records, and the
    /// bench goes on: the library is then no bar to hold the reference against on this machine.
    bool library = false;
    /// Why the library may compute another answer on some machines, said when its check fails
    /// ("without VNNI, oneDNN sums pairs of products in saturating int16").
    std::string known_wrong;
  };

  /// Times `versions` wherever a case times `function` (perf.timed(function)), beside `function`
  /// itself, the reference solution, labelled `label`.
  template <class R, class... Args>
  void versions(R (*function)(Args...), std::string label,
                std::vector<Version<R(Args...)>> versions);

  /// main() of the bench: parses the command line (parse_bench_arguments), loads the ceilings
  /// (`load_ceilings`; empty: the CPU's), runs the cases and finishes the table, records and plot.
  /// A case that throws workbook::Skipped (no GPU here) is left out with its message; when every
  /// case was, returns kSkipReturnCode. `more`, when given, runs after the table: the bench's own
  /// measurements that are no case of the lab's, and figures drawn from the table's rows.
  /// With --versus-library only the reference and the library rows are timed, `more` does not run,
  /// a case without a library row is left out (said on stderr), and when no case has one the
  /// bench says so and returns 2: a ratio line was asked for and none can be given. A numbered
  /// version that fails its check is a defect of the solution: the bench stops there (throws).
  int main(int argc, char** argv,
           const std::function<Ceilings(const std::string& path)>& load_ceilings = {},
           const std::function<void(Bench&, const BenchOptions&)>& more = {}) const;

  /// One version, its type erased: what a case needs to run it.
  struct Row {
    std::string label;               ///< its name in the table ("v3 xsimd")
    bool checked = true;             ///< verified once by the case's own check (not a baseline)
    std::vector<std::string> cases;  ///< the cases it runs in; empty: every case of its function
    std::function<void()> choose;    ///< puts this version in the kernel's place
    std::optional<Work> work;        ///< its own work, or the case's
    bool library = false;            ///< a library's implementation (Bench::Version::library)
    std::string known_wrong;         ///< why the library may be wrong (Version::known_wrong)
  };
  /// The versions of one function, their type erased.
  struct Versions {
    std::type_index signature;    ///< typeid of the function's type, checked against the case's
    std::string reference_label;  ///< the function itself, the reference
    std::shared_ptr<void> slot;   ///< the std::function<Signature> that Timed calls when set
    std::vector<Row> rows;        ///< the numbered versions and baselines, in table order
    std::function<void()> clear;  ///< empties the slot: the function itself
  };

 private:
  std::string lab_;
  double max_seconds_;
  std::map<void (*)(), Versions> functions_;
};

template <class R, class... Args>
void LabBench::versions(R (*function)(Args...), std::string label,
                        std::vector<Version<R(Args...)>> versions) {
  auto slot = std::make_shared<std::function<R(Args...)>>();
  Versions erased{typeid(R(Args...)), std::move(label), slot, {}, [slot] { *slot = nullptr; }};
  for (Version<R(Args...)>& v : versions)
    erased.rows.push_back({std::move(v.label), v.checked, std::move(v.cases),
                           [slot, f = std::move(v.function)] { *slot = f; }, v.work, v.library,
                           std::move(v.known_wrong)});
  functions_.insert_or_assign(reinterpret_cast<void (*)()>(function), std::move(erased));
}

}  // namespace workbook
