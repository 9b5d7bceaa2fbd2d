// Packaging for Gradescope, GitHub Classroom and PrairieLearn. The scripts are templates in
// autograder/packaging/; this file assembles them with the trusted tree.
#include <grade/package.hpp>

#include <grade/archive.hpp>
#include <grade/prepare.hpp>
#include <grade/rubric.hpp>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace workbook::grade {
namespace {

// What never goes into a package or a kit: build outputs and tool state.
bool excluded(const std::string& relative) {
  for (const char* prefix : {"build/", ".git/", "Testing/", ".deps/", "grade-results/"})
    if (relative.rfind(prefix, 0) == 0) return true;
  return relative == ".git";
}

std::string number_text(double v) {
  std::string t = std::to_string(v);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t;
}

}  // namespace

std::vector<std::string> project_files(const fs::path& root) {
  std::vector<std::string> files;
  // A git checkout: its files, tracked or new, but not what it ignores (a scratch folder, a local
  // copy of the tree) nor what was deleted.
  if (fs::exists(root / ".git")) {
    const CommandResult git =
        run_command({"/usr/bin/env", "git", "-c", "core.quotePath=false", "-C", root.string(),
                     "ls-files", "--cached", "--others", "--exclude-standard"});
    if (git.code == 0) {
      std::istringstream lines(git.output);
      for (std::string relative; std::getline(lines, relative);) {
        const fs::path path = root / relative;
        if (!relative.empty() && !excluded(relative) &&
            fs::is_regular_file(fs::symlink_status(path)))
          files.push_back(relative);
      }
      std::sort(files.begin(), files.end());
      files.erase(std::unique(files.begin(), files.end()), files.end());
      return files;
    }
  }
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string relative = it->path().lexically_relative(root).generic_string();
    if (excluded(relative + (it->is_directory() ? "/" : ""))) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && !it->is_symlink()) files.push_back(relative);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> uncommitted_files(const fs::path& root) {
  if (!fs::exists(root / ".git")) return {};
  const CommandResult git = run_command({"/usr/bin/env", "git", "-c", "core.quotePath=false", "-C",
                                         root.string(), "status", "--porcelain", "--no-renames"});
  if (git.code != 0)
    throw std::runtime_error("cannot tell which files of " + root.string() +
                             " are committed (git status failed):\n" + first_errors(git.output));
  std::vector<std::string> files;
  std::istringstream lines(git.output);
  for (std::string line; std::getline(lines, line);)
    if (line.size() > 3 && !excluded(line.substr(3))) files.push_back(line.substr(3));
  std::sort(files.begin(), files.end());
  return files;
}

void require_committed(const fs::path& root, bool allow_dirty, const std::string& what) {
  if (allow_dirty) return;
  const std::vector<std::string> files = uncommitted_files(root);
  if (files.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < files.size() && i < 10; ++i) list += "\n  " + files[i];
  if (files.size() > 10) list += "\n  ... and " + std::to_string(files.size() - 10) + " more";
  throw std::invalid_argument(
      "the trusted tree " + root.string() + " has " + std::to_string(files.size()) +
      " uncommitted file(s), and " + what +
      " would be made from them (a stub implemented to try a lab would go to every student):" +
      list + "\nCommit them, or set them aside (git -C " + shell_quote(root.string()) +
      " stash --include-untracked), then run this again; or pass --allow-dirty to use the working "
      "tree as it is.");
}

std::string with_labs(const std::string& script, const std::vector<std::string>& labs) {
  if (labs.empty()) return script;
  std::string list;
  for (const std::string& n : labs) list += (list.empty() ? "" : ",") + n;
  std::string out;
  int found = 0;
  std::istringstream lines(script);
  for (std::string line; std::getline(lines, line);) {
    for (const char* command : {"workbook-grade grade ", "workbook-grade prepare "})
      if (const std::size_t at = line.find(command);
          at != std::string::npos && line.compare(0, 1, "#") != 0) {
        // After the command and its first word (the submission, for grade).
        std::size_t insert = at + std::strlen(command);
        if (std::string(command).find("grade grade") != std::string::npos)
          insert = line.find(' ', insert) == std::string::npos ? line.size()
                                                               : line.find(' ', insert) + 1;
        line.insert(insert, "--labs " + list + (insert == line.size() ? "" : " "));
        ++found;
        break;
      }
    out += line + "\n";
  }
  if (found == 0)
    throw std::logic_error("a packaging script has no workbook-grade command to give --labs to");
  return out;
}

void package_gradescope(const fs::path& trusted, const fs::path& zip, std::ostream& log,
                        const std::vector<std::string>& labs) {
  const fs::path templates = trusted / "autograder" / "packaging" / "gradescope";
  std::vector<ArchiveEntry> entries;
  // Gradescope unpacks the zip into /autograder/source and runs setup.sh there once; it then runs
  // /autograder/run_autograder (a copy of ours) for every submission.
  entries.push_back({"setup.sh", with_labs(read_text(templates / "setup.sh"), labs), true});
  entries.push_back(
      {"run_autograder", with_labs(read_text(templates / "run_autograder"), labs), true});
  for (const std::string& f : project_files(trusted)) {
    if (f == "setup.sh" || f == "run_autograder") continue;
    const fs::perms p = fs::status(trusted / f).permissions();
    entries.push_back({f, read_text(trusted / f), (p & fs::perms::owner_exec) != fs::perms::none});
  }
  write_text_atomic(zip, make_zip(entries));
  log << "wrote " << zip.string() << " (" << entries.size()
      << " files): upload it as the Gradescope autograder, "
      << "on a Debian 12 base image (see autograder/README.md)\n";
}

std::string classroom_workflow(const fs::path& trusted, const Cache* cache) {
  std::vector<std::string> folders;
  for (const auto& e : fs::directory_iterator(trusted / "labs")) {
    const std::string n = e.path().filename().string();
    if (e.is_directory() && n.size() > 3 && std::isdigit(static_cast<unsigned char>(n[0])) &&
        n[2] == '_')
      folders.push_back(n);
  }
  std::sort(folders.begin(), folders.end());
  std::string y = read_text(trusted / "autograder" / "packaging" / "classroom" / "header.yml");
  std::string runners, env;
  for (const std::string& folder : folders) {
    const std::string n = folder.substr(0, 2), id = "lab" + n;
    // A lab's points: its visible tests' points in its rubric (from a prepared cache, which knows
    // the tests), else 10; all or nothing, as GitHub's command grader scores a step.
    double points = 10;
    if (cache && cache->labs.count(n) && cache->labs.at(n).available) {
      const LabRecipe& lab = cache->labs.at(n);
      const Rubric rubric = cache->rubric(lab);
      points = 0;
      for (const std::string& t : lab.visible_tests)
        if (const Rule* r = rubric.find(Source::visible, t)) points += r->points;
    }
    y += "      - name: Lab " + n + " (" + folder.substr(3) +
         "), correctness\n"
         "        id: " +
         id +
         "\n"
         "        uses: classroom-resources/autograding-command-grader@v1\n"
         "        with:\n"
         "          test-name: lab " +
         n +
         " correctness\n"
         "          setup-command: cmake -S . -B build/" +
         id + " -G Ninja -DWORKBOOK_LABS=" + n +
         " -DWORKBOOK_REGISTER_LAST_BUILD=OFF && cmake --build build/" + id +
         "\n"
         "          command: ctest --test-dir build/" +
         id +
         " -L correctness --output-on-failure\n"
         "          timeout: 15\n"
         "          max-score: " +
         number_text(points) +
         "\n"
         "      - name: Lab " +
         n +
         " perf feedback (not scored: shared runners cannot time fairly)\n"
         "        continue-on-error: true\n"
         "        run: ctest --test-dir build/" +
         id + " -L perf --output-on-failure\n";
    runners += (runners.empty() ? "" : ",") + id;
    std::string upper = id;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    env += "          " + upper + "_RESULTS: \"${{ steps." + id + ".outputs.result }}\"\n";
  }
  y += "      - name: Autograding Reporter\n"
       "        uses: classroom-resources/autograding-grading-reporter@v1\n"
       "        env:\n" +
       env +
       "        with:\n"
       "          runners: " +
       runners + "\n";
  return y;
}

void package_prairielearn(const fs::path& trusted, const fs::path& out, std::ostream& log,
                          const std::vector<std::string>& labs) {
  const fs::path templates = trusted / "autograder" / "packaging" / "prairielearn";
  fs::create_directories(out);
  for (const auto& e : fs::directory_iterator(templates)) {
    const std::string name = e.path().filename().string();
    if (name == "run.sh" || name == "Dockerfile")
      write_text_atomic(out / name, with_labs(read_text(e.path()), labs));
    else
      fs::copy_file(e.path(), out / name, fs::copy_options::overwrite_existing);
  }
  fs::permissions(out / "run.sh", fs::perms::owner_all | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read |
                                      fs::perms::others_exec);
  log << "wrote " << out.string()
      << ": the Dockerfile builds the grading image, run.sh is its entrypoint, "
      << "info.json shows the question settings (see README.md there)\n";
}

}  // namespace workbook::grade
