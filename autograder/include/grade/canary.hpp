#pragma once
/// \file canary.hpp
/// \brief The canary: a prepared cache proves itself before it grades a student. It grades
/// @reference (every test passes) and @stub (every test fails) of each lab it prepared, in the real
/// sandbox, and records the result with what it was proved for (this build of the grader, this
/// machine, this cache folder). `grade` and `batch` refuse a cache whose canary failed or was run
/// for another grader, machine or folder, so that a fault of the grader's own (files the sandbox's
/// user cannot read, a broken toolchain) stops the instructor before it zeroes a class.

#include <grade/options.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace workbook::grade {

/// What the canary proved, as the generation's `canary.json` records it (see prepare.hpp).
struct Canary {
  bool passed = false;  ///< the reference got every point and the stub none, on every lab tried
  std::string grader;   ///< a hash of the workbook-grade executable that ran it
  std::string machine;  ///< a hash of this machine's CPU model and flags, and its compilers
  std::string cache;    ///< the cache's real path
  std::string when;     ///< UTC
  std::vector<std::string> labs;      ///< the labs it tried
  std::vector<std::string> problems;  ///< why it failed: per lab, what the reference or stub got
  std::vector<std::string> notes;     ///< labs it could not try here (a CUDA lab without a GPU)
};

/// Grades @reference and @stub of the labs of the cache that are available (correctness only: the
/// reference timed against itself proves nothing and is noisy), with `base`'s limits and work
/// folder, and writes each generation's `canary.json` for the labs it built (see prepare.hpp).
/// Given a generation's folder, it proves that generation's labs; given the cache's, every
/// generation whose canary does not stand for `base.labs`. Returns what it found, over all the
/// generations it proved. Progress goes to `log`.
Canary run_canary(const fs::path& cache, const GradeOptions& base, std::ostream& log);

/// Empty when the canary recorded in `cache` passed, for the `labs` to grade (empty: all), and
/// for this grader, machine and folder; otherwise the reason it does not stand, which names the
/// command that runs it again.
std::string canary_problem(const fs::path& cache, const std::vector<std::string>& labs = {});

/// Runs the canary unless the one recorded stands for `base.labs` (canary_problem() is empty).
/// Returns whether it stands now.
bool prove_cache(const fs::path& cache, const GradeOptions& base, std::ostream& log);

}  // namespace workbook::grade
