#pragma once
/// \file kit.hpp
/// \brief The student kit: the repository students get (labs with their stubs, the harness, docs,
/// presets), without solutions, hidden tests or rubrics, and its verification.

#include <grade/util.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace workbook::grade {

struct KitOptions {
  fs::path trusted;  ///< the instructor's tree
  fs::path out;      ///< the kit (created; must not exist unless force)
  fs::path cache;    ///< a prepared grading cache, for the Classroom workflow's points (optional)
  bool force = false;
  bool allow_dirty = false;  ///< export the working tree even where it differs from its last commit
  bool verify = true;
  /// Labs whose build, stubs and perf feedback the check tries (empty: all). The check for
  /// secrets always covers the whole kit.
  std::vector<std::string> verify_labs;
  int jobs = 2;
  double perf_seconds = 0.5;  ///< timing budget of the perf-feedback check
  /// A reference slower here than its profile says is a warning, not a kit that is not ready (for
  /// a machine unlike the students', or a shared one such as CI's).
  bool allow_slow_reference = false;
};

/// Exports the kit, then (verify) checks in a scratch copy that: nothing secret is in it; it
/// configures and builds; every lab's stub still leaves each function of its STUB list to the
/// student, and its tests fail with "not implemented yet: implement <fn> in labs/..."; and the perf
/// feedback works without solution sources: with the reference implementation dropped into the
/// scratch copy, each perf case is judged by the reference profile, and the reference passes it.
/// Returns 0 when all holds.
int export_kit(const KitOptions& options, std::ostream& log);

}  // namespace workbook::grade
