#pragma once
/// \file package.hpp
/// \brief Packaging: a Gradescope autograder zip (setup.sh, run_autograder, the trusted tree), a
/// GitHub Classroom workflow, and a PrairieLearn external-grader setup.

#include <grade/util.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace workbook::grade {

/// The Gradescope autograder: a zip with setup.sh, run_autograder and the trusted tree at its root
/// (Gradescope unpacks it to /autograder/source). With `labs` (numbers), the image prepares and
/// grades those labs only: one assignment per lab (or per set of labs), scored over their points.
void package_gradescope(const fs::path& trusted, const fs::path& zip, std::ostream& log,
                        const std::vector<std::string>& labs = {});

struct Cache;

/// .github/workflows/classroom.yml for the student repository: builds each lab and reports its
/// visible tests to GitHub Classroom (points per lab from the rubrics, when a prepared cache is
/// given).
std::string classroom_workflow(const fs::path& trusted, const Cache* cache);

/// A PrairieLearn external-grader folder: the run script and an example info.json. With `labs`,
/// the image prepares and grades those labs only (a question per lab).
void package_prairielearn(const fs::path& trusted, const fs::path& out, std::ostream& log,
                          const std::vector<std::string>& labs = {});

/// A packaging script with `--labs L` given to each of its `workbook-grade prepare` and `grade`
/// commands (after grade's submission); the script as it is for no labs. Throws std::logic_error
/// when the script has no such command (the template changed).
std::string with_labs(const std::string& script, const std::vector<std::string>& labs);

/// Files of a tree that are part of the project, relative, sorted: in a git checkout those git
/// tracks or would (not what it ignores); elsewhere every file but build outputs and tool state.
std::vector<std::string> project_files(const fs::path& root);

/// Files of a git checkout that differ from its last commit: tracked files edited (staged or not)
/// or deleted, and new files git does not ignore, relative, sorted. Empty elsewhere.
std::vector<std::string> uncommitted_files(const fs::path& root);

/// What the student kit, @stub and @reference come from is the trusted tree's last commit: throws
/// std::invalid_argument naming the uncommitted files (an instructor's try at a lab in the same
/// clone would otherwise be handed out as the stub) unless `allow_dirty`. `what` says what would
/// be made from them ("the student kit").
void require_committed(const fs::path& root, bool allow_dirty, const std::string& what);

}  // namespace workbook::grade
