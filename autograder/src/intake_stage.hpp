#pragma once
// Intake, the pipeline's first stage: where the submission's files are (a folder, an archive
// unpacked in the sandbox, or the trusted tree's reference or stub), and, per lab, the whitelisted
// files copied into the workspace. Private to the grader.
#include <grade/prepare.hpp>
#include <grade/result.hpp>

#include "workspace.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace workbook::grade {

/// Whether a file's name says it is an archive the grader unpacks (.zip, .tar, .tar.gz, ...).
bool is_archive(const fs::path& p);
/// Unpacks an archive in the sandbox (as the sandbox user: an archive is untrusted input too).
fs::path unpack(const Context& c, const fs::path& archive);
/// Finds `relative` (labs/<folder>/<file>) in a submission: at that path under the root or under
/// one of its folders, else (a flat upload) a file with the same name when that name is
/// unambiguous.
std::optional<fs::path> locate(const fs::path& root, const std::string& relative, bool name_unique);
/// Reads a submitted file safely: a regular file (never a link to something of the grader's), not
/// larger than allowed. Throws std::invalid_argument saying why not.
std::string read_submitted(const fs::path& p, std::size_t max_bytes);
/// The submission's name in the gradebook when none is given: its file name, less the archive's
/// extension.
std::string trimmed_id(const fs::path& submission);

/// The folder the submission's files are looked for in: the submission itself (a folder), the
/// archive unpacked, or (@reference, @stub) a copy of the trusted tree's own files.
/// Throws std::invalid_argument when the submission is none of these.
fs::path submission_root(const Context& c);

/// The name a student asked to appear under on the class leaderboard (opt-in): a line
/// `leaderboard_name: NAME` (or `= NAME`) in a leaderboard.txt anywhere in the submission. Empty
/// when there is none; printable ASCII only, at most 40 characters (the rest is dropped).
std::string leaderboard_name(const fs::path& root);

/// What intake found of one lab.
struct LabIntake {
  bool submitted = true;  ///< every required file found and taken
  std::string missing;    ///< for the student: which files are missing or refused, and why
  std::vector<SubmittedFile> files;  ///< the files taken (into the workspace's src/)
};

/// Takes one lab's whitelisted files (and the optional helper files its rubric allows) from the
/// submission into the workspace. `name_count` counts each file name over every lab of the cache
/// (a flat upload is matched by name only where the name is unambiguous).
LabIntake take_lab_files(const Context& c, const fs::path& root, const LabRecipe& lab,
                         const Rubric& rubric, const std::map<std::string, int>& name_count);

}  // namespace workbook::grade
