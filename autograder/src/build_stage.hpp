#pragma once
// Build: a lab's student sources compiled with the trusted build's own commands, audited, and
// linked with the trusted objects, all in the sandbox. Private to the grader.
#include <grade/prepare.hpp>
#include <grade/result.hpp>
#include <grade/rubric.hpp>

#include "workspace.hpp"

#include <string>
#include <vector>

namespace workbook::grade {

/// Folders a compile or link needs besides the system folders and its inputs: the compiler's own
/// installation when it lives elsewhere (a toolchain under /sw/gcc-13, a CUDA toolkit under
/// /sw/cuda: the folder above its bin/, for its headers, libraries and helpers, nvcc's host
/// compiler included) and the link's -L folders.
std::vector<std::string> tool_folders(const std::vector<std::string>& argv);

/// The toolchain's line naming the file of the grader's own on which a failed compile or link
/// failed, or empty when the failure is the student's. The toolchain names a file before ":
/// Permission denied" or ": No such file or directory" (relative names are relative to `cwd`, where
/// the compiler runs): one within the grading `cache` (its libraries and headers, unreadable to the
/// sandbox's user, or changed under a running grade), or, denied, within the grade's `work` folder
/// (laid out by the grader), is the machine's fault, never the student's. A file of the student's
/// own choosing elsewhere (an #include of /etc/shadow, a header that does not exist) stays the
/// student's.
std::string grader_file_fault(const std::string& output, const fs::path& cache,
                              const fs::path& work, const fs::path& cwd);

/// How a lab's build went.
struct BuildStep {
  bool ok = false;
  LabStatus status = LabStatus::graded;  ///< compile_error, symbol_error or link_error when not ok
  std::string output;                    ///< the first errors, paths as the student sees them
};

/// Compiles, audits and links a lab's submission into the workspace's bin/labNN/.
BuildStep build_lab(Context& c, const LabRecipe& lab, const Rubric& rubric);

}  // namespace workbook::grade
