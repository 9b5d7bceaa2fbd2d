#pragma once
/// \file bench.hpp
/// \brief The shared benchmark helper: each lab's bench times its kernels (the reference, its
/// numbered versions, library baselines) and shows every one against the measured ceilings, as a
/// table, a JSON record and a roofline plot.
///
/// \code
/// workbook::Bench bench("lab01", workbook::load_or_measure_ceilings(path, false));
/// bench.compare("relu, 64 Mi floats", work, {
///     {"v1 scalar", [&] { versions::relu_v1_scalar(x, y); }},
///     {"v4 streaming stores", [&] { lab01::relu(x, y); }, workbook::Bench::kReference},
/// });
/// bench.finish(std::cout, workbook::results_dir());
/// \endcode
///
/// The versions of one group are timed interleaved (time_interleaved), so that a burst of noise on
/// a shared machine slows them all alike instead of one of them.

#include <workbook/ceilings.hpp>
#include <workbook/roofline.hpp>
#include <workbook/timing.hpp>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
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
  };

  /// Times the versions of one kernel, each doing `work` per call (or its own Version::work),
  /// interleaved, and adds them to the table under `group` (the kernel and its size). Returns where
  /// each landed on the roofline.
  std::vector<Analysis> compare(const std::string& group, const Work& work, const std::vector<Version>& versions,
                                const TimingOptions& timing = {.max_seconds = 1.0});

  /// Prints the table to `out`, and writes `results/bench/LAB.json` (every timing and analysis,
  /// with the ceilings) and `results/bench/LAB.svg` (the roofline plot), creating the folder.
  /// Throws std::runtime_error when a file cannot be written.
  void finish(std::ostream& out, const std::filesystem::path& results) const;

  /// The roofs given at construction, for a bench that sizes its work by them (`threads`).
  const Ceilings& ceilings() const { return ceilings_; }

 private:
  struct Entry {
    std::string group, label;
    bool reference;
    Timing timing;
    Analysis analysis;
  };
  std::string lab_;
  Ceilings ceilings_;
  std::vector<Entry> entries_;
};

/// The command line every bench takes: `--ceilings FILE` and `--results DIR` (defaults as for the
/// tests). Returns false (after printing usage) on anything else.
bool parse_bench_arguments(int argc, char** argv, std::string& ceilings, std::filesystem::path& results);

}  // namespace workbook
