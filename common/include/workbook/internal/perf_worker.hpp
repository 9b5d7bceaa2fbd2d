#pragma once
/// \file perf_worker.hpp
/// \brief The command line of a lab's perf worker (labNN_perf), shared by the CPU main
/// (workbook::perf::worker_main) and the GPU worker's, which adds `--ncu` beside it.

#include <workbook/ceilings.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace workbook::perf {

/// What a perf worker was asked to do.
struct WorkerOptions {
  bool list = false;                  ///< --list: print the case names
  bool worker = false;                ///< --worker: serve the driver on fds 3, 4 and 5
  std::string case_name;              ///< --case: the case the driver asks for
  std::optional<std::uint64_t> seed;  ///< --seed: the inputs (else derived from the case's name)
  std::string ceilings;               ///< --ceilings: the stand-alone mode's ceilings cache
  std::vector<std::string> names;     ///< the cases to time stand-alone (none: all)
};

/// Adds the worker's options to `app`; unknown options stay errors.
void add_worker_options(CLI::App& app, WorkerOptions& options);

/// Does what `options` ask: lists the cases, serves the driver, or times cases stand-alone against
/// the ceilings (`load_ceilings`, when given, replaces the CPU's: a GPU worker passes the GPU's).
int run_worker_options(const WorkerOptions& options,
                       const std::function<Ceilings(const std::string& path)>& load_ceilings = {});

}  // namespace workbook::perf
