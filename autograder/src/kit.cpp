// The student kit: export, then verify in a scratch copy (no secrets, builds, stubs fail cleanly,
// perf feedback works from the reference profiles alone).
#include <grade/kit.hpp>

#include <grade/hash.hpp>
#include <grade/package.hpp>
#include <grade/prepare.hpp>
#include <grade/util.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>
#include <workbook/skip.hpp>

namespace workbook::grade {
namespace {

using nlohmann::json;

// Top-level parts of the instructor's tree that students do not get: the reference solutions and
// the autograder (rubrics, hidden tests, known-wrong submissions), and the project's CI (it runs
// the solutions); the kit gets the GitHub Classroom workflow instead.
// tools/ measures the reference (update_reference_data.sh), which the kit has not.
const std::vector<std::string> kInstructorOnly = {"solutions/", "autograder/", ".ci/", "tools/"};

// The root README.md marks what speaks of those parts (the solutions' presets, the grader, CI)
// between these lines: the kit's README leaves it out, so that it speaks of the kit as it is.
constexpr std::string_view kInstructorsOnlyBegin = "<!-- kit: instructors only -->";
constexpr std::string_view kInstructorsOnlyEnd = "<!-- kit: end -->";

std::string without_instructors_parts(const std::string& readme) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t b; (b = readme.find(kInstructorsOnlyBegin, from)) != std::string::npos;) {
    const std::size_t e = readme.find(kInstructorsOnlyEnd, b);
    if (e == std::string::npos)
      throw std::runtime_error("README.md: \"" + std::string(kInstructorsOnlyBegin) +
                               "\" has no \"" + std::string(kInstructorsOnlyEnd) +
                               "\" after it: close the part the student kit leaves out");
    out += readme.substr(from, b - from);
    from = e + kInstructorsOnlyEnd.size();
    if (from < readme.size() && readme[from] == '\n') ++from;
    // One blank line where the part was, not two.
    while (out.ends_with("\n\n") && from < readme.size() && readme[from] == '\n') ++from;
  }
  return out + readme.substr(from);
}

// What the kit's README still says of what the kit has not: an instructor-only folder, or a
// preset it removed. Empty when it speaks of the kit as it is.
std::vector<std::string> readme_mentions_of_the_missing(const std::string& readme,
                                                        const std::vector<std::string>& removed) {
  std::vector<std::string> found;
  // A folder named as a path: at a word's start ("solutions/", "`autograder/", "(tools/").
  for (const std::string& folder : kInstructorOnly) {
    const std::string escaped = std::regex_replace(folder, std::regex("\\."), "\\.");
    if (std::regex_search(readme, std::regex("(^|[\\s`(\\[])" + escaped))) found.push_back(folder);
  }
  for (const std::string& preset : removed)
    if (std::regex_search(readme, std::regex("--preset " + preset + "([^-A-Za-z0-9_]|$)")))
      found.push_back("the preset " + preset);
  return found;
}

bool instructor_only(const std::string& relative) {
  return std::any_of(kInstructorOnly.begin(), kInstructorOnly.end(),
                     [&](const std::string& p) { return relative.rfind(p, 0) == 0; });
}

// Presets that need the solutions (WORKBOOK_IMPL=solutions, directly or inherited) do not work in
// the kit: removed, with every build, test and workflow preset that uses them.
std::pair<std::string, std::vector<std::string>> student_presets(const std::string& text) {
  json p = json::parse(text);
  std::map<std::string, json> configure;
  for (const json& c : items_of(p, "configurePresets")) configure[c.value("name", "")] = c;
  std::function<std::string(const std::string&)> impl =
      [&](const std::string& name) -> std::string {
    const auto it = configure.find(name);
    if (it == configure.end()) return "";
    const json& c = it->second;
    if (c.contains("cacheVariables") && c["cacheVariables"].contains("WORKBOOK_IMPL")) {
      const json& v = c["cacheVariables"]["WORKBOOK_IMPL"];
      return v.is_string() ? v.get<std::string>() : v.value("value", "");
    }
    if (c.contains("inherits")) {
      const json& parents = c["inherits"];
      for (const json& parent : parents.is_array() ? parents : json::array({parents})) {
        const std::string found = impl(parent.get<std::string>());
        if (!found.empty()) return found;
      }
    }
    return "";
  };
  std::set<std::string> removed;
  for (const auto& [name, c] : configure)
    if (impl(name) == "solutions") removed.insert(name);
  std::set<std::string> removed_other;
  auto filter = [&](const char* key, auto&& uses_removed) {
    if (!p.contains(key)) return;
    json kept = json::array();
    for (const json& x : p[key]) {
      if (uses_removed(x))
        removed_other.insert(x.value("name", ""));
      else
        kept.push_back(x);
    }
    p[key] = kept;
  };
  filter("configurePresets", [&](const json& x) { return removed.count(x.value("name", "")) > 0; });
  filter("buildPresets",
         [&](const json& x) { return removed.count(x.value("configurePreset", "")) > 0; });
  filter("testPresets",
         [&](const json& x) { return removed.count(x.value("configurePreset", "")) > 0; });
  filter("workflowPresets", [&](const json& x) {
    for (const json& step : items_of(x, "steps"))
      if (step.value("type", "") == "configure" && removed.count(step.value("name", "")))
        return true;
    return false;
  });
  std::vector<std::string> names(removed.begin(), removed.end());
  return {p.dump(2) + "\n", names};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Why a run skipped: the line it printed about it ("no CUDA device: skipped (...)").
std::string skip_reason(const std::string& output) {
  for (const std::string& line : lines_of(output))
    if (line.find("skipped") != std::string::npos) return line;
  return "it exited with the skip code, saying nothing";
}

bool check(bool ok, const std::string& what, std::ostream& log, int& failures) {
  log << (ok ? "  ok: " : "  FAILED: ") << what << "\n";
  failures += !ok;
  return ok;
}

int verify(const KitOptions& o, const std::vector<std::string>& removed_presets,
           std::ostream& log) {
  int failures = 0;
  log << "verifying the kit " << o.out.string() << "\n";
  // 1. Nothing of the instructor's: no such folder, and no file whose contents equal a solution,
  //    a hidden test or a rubric (a solution copied into labs/ by mistake is caught too).
  const std::vector<std::string> kit_files = project_files(o.out);
  std::set<std::string> secret_hashes;
  std::map<std::string, std::string> secret_names;
  for (const char* folder : {"solutions", "autograder/labs"}) {
    if (!fs::exists(o.trusted / folder)) continue;
    for (const auto& e : fs::recursive_directory_iterator(o.trusted / folder)) {
      if (!e.is_regular_file()) continue;
      const std::string data = read_text(e.path());
      if (data.size() < 64) continue;  // tiny files (an empty CMakeLists) say nothing
      secret_hashes.insert(hash_hex(data));
      secret_names[hash_hex(data)] = e.path().lexically_relative(o.trusted).string();
    }
  }
  std::vector<std::string> leaks;
  for (const std::string& f : kit_files) {
    if (instructor_only(f)) leaks.push_back(f + " (an instructor-only folder)");
    const std::string h = hash_hex(read_text(o.out / f));
    if (secret_hashes.count(h)) leaks.push_back(f + " (the same as " + secret_names[h] + ")");
  }
  check(leaks.empty(),
        "no solution, hidden test or rubric in the kit" +
            (leaks.empty() ? std::string() : ": " + leaks.front()),
        log, failures);
  if (fs::exists(o.out / "README.md")) {
    std::string missing;
    for (const std::string& m :
         readme_mentions_of_the_missing(read_text(o.out / "README.md"), removed_presets))
      missing += (missing.empty() ? "" : ", ") + m;
    check(missing.empty(),
          "its README.md speaks only of what the kit has" +
              (missing.empty() ? std::string()
                               : " (it mentions " + missing +
                                     ": mark that part of the trusted "
                                     "README.md between \"" +
                                     std::string(kInstructorsOnlyBegin) + "\" and \"" +
                                     std::string(kInstructorsOnlyEnd) + "\")"),
          log, failures);
  }

  // 2. It builds, in a scratch copy (the kit itself stays clean).
  const fs::path scratch = o.out.parent_path() / (o.out.filename().string() + ".verify");
  fs::remove_all(scratch);
  copy_tree(o.out, scratch);
  const fs::path build = scratch / "build" / "verify";
  std::string labs_to_build;
  for (const std::string& n : o.verify_labs)
    labs_to_build += (labs_to_build.empty() ? "" : ";") + n;
  if (labs_to_build.empty())
    labs_to_build = "all";
  else
    log << "  (building and trying labs " << labs_to_build << " only, as --verify-labs asks)\n";
  const auto tried = [&](const std::string& folder) {
    return o.verify_labs.empty() || std::find(o.verify_labs.begin(), o.verify_labs.end(),
                                              folder.substr(0, 2)) != o.verify_labs.end();
  };
  CommandResult r = run_command({"/usr/bin/env", "cmake", "--list-presets=all"}, scratch);
  check(r.code == 0, "its CMakePresets.json is valid", log, failures);
  r = run_command({"/usr/bin/env", "cmake", "-S", scratch.string(), "-B", build.string(), "-G",
                   "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DWORKBOOK_IMPL=labs",
                   "-DWORKBOOK_LABS=" + labs_to_build, "-DWORKBOOK_REGISTER_LAST_BUILD=OFF"});
  if (!check(r.code == 0,
             "it configures without solutions (every lab with perf cases has a reference profile)",
             log, failures)) {
    log << first_errors(r.output, 30);
    return failures;
  }
  log << "  building the kit (" << o.jobs << " jobs) ...\n" << std::flush;
  r = build_with_progress(build, o.jobs, "building the kit", log);
  if (!check(r.code == 0, "it builds", log, failures)) {
    log << first_errors(r.output, 30);
    return failures;
  }

  // 3. Every lab's stub leaves each of its functions to the student, and its tests fail on it,
  //    each naming the function to implement and the file: the lab's own stub check
  //    (cmake/CheckStub.cmake, with the arguments the kit's build wrote for it).
  std::vector<std::string> folders;
  for (const auto& e : fs::directory_iterator(scratch / "labs"))
    if (e.is_directory() && tried(e.path().filename().string()))
      folders.push_back(e.path().filename().string());
  std::sort(folders.begin(), folders.end());
  for (const std::string& folder : folders) {
    const std::string lab = "lab" + folder.substr(0, 2);
    const fs::path script = build / "labs" / folder / "check_stub.cmake";
    if (!fs::exists(script)) {
      check(false, lab + ": its stub check was configured (" + script.string() + ")", log,
            failures);
      continue;
    }
    const CommandResult t =
        run_command({"/usr/bin/env", "cmake", "-P", script.string()}, build, 600);
    if (const auto skipped = t.output.find("stub tests skipped: ");
        t.code == 0 && skipped != std::string::npos) {
      // A CUDA lab on a machine without a GPU: its sources were checked, its tests could not run,
      // which is not a failure of the kit.
      log << "  skipped: " << lab << "'s stub tests (" << skip_reason(t.output.substr(skipped))
          << ")\n";
      continue;
    }
    if (!check(t.code == 0,
               lab +
                   ": the stub leaves every function of its STUB list to the student, and its "
                   "tests fail with \"not implemented yet: implement ... in labs/" +
                   folder + "/...\"",
               log, failures))
      log << first_errors(t.output, 12);
  }

  // 4. The perf feedback works without solution sources: with the reference implementation dropped
  //    into the scratch copy, each perf case runs in profile mode and explains the result.
  const CommandResult listed = run_command(
      {"/usr/bin/env", "ctest", "--test-dir", build.string(), "-N", "-V", "-L", "perf"}, build);
  const fs::path ceilings = build / "workbook-ceilings.json";
  bool probed = false;
  for (const std::string& folder : folders) {
    const std::string lab = "lab" + folder.substr(0, 2);
    const fs::path perf_worker = build / "labs" / folder / (lab + "_perf");
    if (!fs::exists(perf_worker)) continue;
    check(listed.output.find("--profile") != std::string::npos &&
              listed.output.find(lab + ".perf.") != std::string::npos,
          lab + ": its perf tests judge by labs/" + folder + "/tests/reference_profile.json", log,
          failures);
    if (!fs::exists(o.trusted / "solutions" / folder)) {
      log << "  (" << lab << ": no reference solution to try the perf feedback with)\n";
      continue;
    }
    // The reference's files (its sources and helper headers; not its CMakeLists) over the stub.
    for (const auto& e : fs::directory_iterator(o.trusted / "solutions" / folder))
      if (e.is_regular_file() && e.path().filename() != "CMakeLists.txt")
        fs::copy_file(e.path(), scratch / "labs" / folder / e.path().filename(),
                      fs::copy_options::overwrite_existing);
    r = run_command({"/usr/bin/env", "cmake", "--build", build.string(), "-j",
                     std::to_string(o.jobs), "--target", lab + "_perf"});
    if (!check(r.code == 0, lab + ": the reference implementation builds in the kit", log,
               failures))
      continue;
    if (!probed) {
      log << "  measuring the ceilings for the perf check ...\n" << std::flush;
      run_command({(build / "common" / "workbook-probe").string(), "--cache", ceilings.string()},
                  build);
      probed = true;
    }
    const CommandResult cases = run_command({perf_worker.string(), "--list"}, build);
    for (const std::string& name : lines_of(cases.output)) {
      if (name.empty()) continue;
      const fs::path results = build / "kit-perf";
      const CommandResult p = run_command(
          {(build / "common" / "workbook-perf").string(), "--lab", lab, "--case", name, "--student",
           perf_worker.string(), "--profile",
           (scratch / "labs" / folder / "tests" / "reference_profile.json").string(),
           "--max-seconds", std::to_string(o.perf_seconds), "--ceilings", ceilings.string(),
           "--results", results.string(), "--edit", "labs/" + folder},
          build, 600);
      bool explained = false;
      std::string verdict;
      const fs::path record = results / lab / (name + ".json");
      if (fs::exists(record)) {
        const json j = read_json(record);
        verdict = j.value("outcome", "");
        explained = j.contains("profile") &&
                    (verdict == "pass" || j.value("reason", "") == "too_slow") &&
                    fs::exists(results / lab / (name + ".svg")) &&
                    p.output.find("Roofline:") != std::string::npos;
      }
      if (verdict == "skipped" && p.code == workbook::kSkipReturnCode) {
        log << "  skipped: " << lab << ".perf." << name << " (" << skip_reason(p.output) << ")\n";
        continue;
      }
      check(explained,
            lab + ".perf." + name + ": judged by the reference profile with roofline feedback (" +
                (verdict.empty() ? "no record" : "the reference's verdict: " + verdict) + ")",
            log, failures);
      // The feedback works, but the reference itself does not reach its own profile here: a
      // student whose kernel is as fast as the reference would read "too slow" on machines like
      // this one. The kit is not ready, unless the instructor knows this machine is not the
      // students' kind (--allow-slow-reference).
      if (explained && verdict != "pass") {
        const std::string what = lab + ".perf." + name +
                                 ": the reference itself is judged too slow against labs/" +
                                 folder + "/tests/reference_profile.json on this machine";
        if (o.allow_slow_reference) {
          log << "  WARNING: " << what << " (--allow-slow-reference)\n";
        } else {
          check(false, what, log, failures);
          log << "    Students as fast as the reference would fail this perf test. If this machine "
                 "was busy, check the kit again when it is quiet. If the profile is from a faster "
                 "machine than the students', measure it on their kind: "
                 "tools/update_reference_data.sh "
              << folder.substr(0, 2)
              << " (then commit it and export the kit again). If this machine is not the "
                 "students' kind, --allow-slow-reference makes this a warning.\n";
        }
      }
    }
  }
  if (failures == 0)
    fs::remove_all(scratch);
  else
    log << "  (the scratch copy is kept for inspection: " << scratch.string() << ")\n";
  return failures;
}

}  // namespace

int export_kit(const KitOptions& o, std::ostream& log) {
  require_committed(o.trusted, o.allow_dirty, "the student kit");
  if (fs::exists(o.out)) {
    if (!o.force)
      throw std::invalid_argument(o.out.string() +
                                  " exists: choose another folder, or --force to replace it");
    fs::remove_all(o.out);
  }
  fs::create_directories(o.out);
  std::vector<std::string> kit_files = project_files(o.trusted);
  std::erase_if(kit_files, instructor_only);
  copy_files(o.trusted, kit_files, o.out);
  const std::size_t copied = kit_files.size();
  std::vector<std::string> removed;
  if (fs::exists(o.out / "CMakePresets.json")) {
    auto [text, names] = student_presets(read_text(o.out / "CMakePresets.json"));
    write_text_atomic(o.out / "CMakePresets.json", text);
    removed = names;
  }
  if (fs::exists(o.out / "README.md")) {
    std::string note =
        "> **Student kit.** The reference solutions and the instructor's tests are not included";
    if (!removed.empty()) {
      note += "; these presets need them and are left out:";
      for (const std::string& n : removed) note += " `" + n + "`";
    }
    note +=
        ". Perf tests compare your kernels with the fraction of the roofline the reference reached "
        "(labs/NN_*/tests/reference_profile.json).\n\n";
    write_text_atomic(o.out / "README.md",
                      note + without_instructors_parts(read_text(o.out / "README.md")));
  }
  std::unique_ptr<Cache> cache;
  try {
    if (!o.cache.empty()) cache = std::make_unique<Cache>(Cache::load(o.cache));
  } catch (const std::exception&) {
  }
  write_text_atomic(o.out / ".github" / "workflows" / "classroom.yml",
                    classroom_workflow(o.trusted, cache.get()));
  log << "exported the student kit to " << o.out.string() << " (" << copied << " files; without";
  for (std::size_t i = 0; i < kInstructorOnly.size(); ++i)
    log << (i == 0 ? " " : ", ") << kInstructorOnly[i];
  if (!removed.empty())
    log << "; presets removed:" << [&] {
      std::string s;
      for (const std::string& n : removed) s += " " + n;
      return s;
    }();
  log << ")\n";
  if (!o.verify) return 0;
  const int failures = verify(o, removed, log);
  log << (failures == 0 ? "the kit is ready\n" : std::to_string(failures) + " check(s) failed\n");
  return failures == 0 ? 0 : 1;
}

}  // namespace workbook::grade
