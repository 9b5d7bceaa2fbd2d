// The grader's trusted build: copy, configure, build, and read back how to compile and link a
// submission's files (CMake's File API), the tests, the perf cases.
#include <grade/prepare.hpp>

#include <grade/hash.hpp>
#include <grade/package.hpp>
#include <grade/sandbox.hpp>

#include <workbook/skip.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

extern char** environ;

namespace workbook::grade {
namespace {

using nlohmann::json;

constexpr int kFormat = 8;  // bump when the cache layout or the recipes change

// The lock file of a cache folder and of each of its generations.
constexpr const char* kLockFile = ".lock";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> list_labs(const fs::path& src) {
  std::vector<std::string> folders;
  if (!fs::exists(src / "labs")) return folders;
  for (const auto& e : fs::directory_iterator(src / "labs")) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name.size() > 3 && std::isdigit(static_cast<unsigned char>(name[0])) &&
        std::isdigit(static_cast<unsigned char>(name[1])) && name[2] == '_')
      folders.push_back(name);
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

// "--gtest_list_tests" output: "Suite.\n  Test\n" (with comments after '#').
std::vector<std::string> parse_gtest_list(const std::string& text) {
  std::vector<std::string> tests;
  std::string suite;
  for (std::string line : lines_of(text)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line = line.substr(0, hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line.empty()) continue;
    if (line[0] != ' ') {
      suite = line;
    } else {
      tests.push_back(suite + line.substr(line.find_first_not_of(' ')));
    }
  }
  return tests;
}

// Default deny: everything in the cache readable by its owner only, then the public parts (the
// harness and the labs as students have them, the build's link inputs) opened to the sandbox user.
void set_permissions(const fs::path& root, const std::vector<fs::path>& public_trees,
                     const std::vector<fs::path>& public_files,
                     const std::vector<fs::path>& run_only) {
  using P = fs::perms;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_symlink()) continue;
    const fs::perms current = fs::status(it->path()).permissions();
    const bool exec = (current & P::owner_exec) != P::none;
    fs::permissions(it->path(),
                    it->is_directory() || exec ? P::owner_all : P::owner_read | P::owner_write);
  }
  const auto inside = [&](const fs::path& p) { return is_within(p, root); };
  auto open_path = [&](const fs::path& p) {
    // Every folder from the cache root down to p: traversable, not listable. (Only inside the
    // cache: a link input may be a system library, whose folders are not ours to change.)
    if (!inside(p)) return;
    for (fs::path d = p.parent_path(); inside(d); d = d.parent_path()) {
      fs::permissions(d, P::others_exec | P::group_exec, fs::perm_options::add);
      if (d == root) break;
    }
  };
  for (const fs::path& tree : public_trees) {
    if (!fs::exists(tree)) continue;
    open_path(tree / "x");
    for (auto it = fs::recursive_directory_iterator(tree); it != fs::recursive_directory_iterator();
         ++it) {
      if (it->is_symlink()) continue;
      fs::permissions(it->path(),
                      it->is_directory()
                          ? P::group_read | P::group_exec | P::others_read | P::others_exec
                          : P::group_read | P::others_read,
                      fs::perm_options::add);
    }
    fs::permissions(tree, P::group_read | P::group_exec | P::others_read | P::others_exec,
                    fs::perm_options::add);
  }
  for (const fs::path& f : public_files) {
    if (!fs::exists(f) || !inside(f)) continue;
    open_path(f);
    fs::permissions(f, P::group_read | P::others_read, fs::perm_options::add);
  }
  // The reference workers run in the sandbox too: executable, not readable (a process running a
  // file it cannot read is not dumpable either: nothing can read its code through /proc).
  for (const fs::path& f : run_only) {
    if (!fs::exists(f) || !inside(f)) continue;
    open_path(f);
    fs::permissions(f, P::group_exec | P::others_exec, fs::perm_options::add);
  }
}

// --- How to compile and link a submission: CMake's File API
// ------------------------------------------
//
// Before configuring, prepare asks CMake for its codemodel (every target's compile groups: flags,
// defines, include folders; its link fragments and the objects it links) and its toolchains (each
// language's compiler). CMake answers in .cmake/api/v1/reply/. The rule templates that turn those
// into command lines (CMAKE_<LANG>_COMPILE_OBJECT, CMAKE_<LANG>_LINK_EXECUTABLE, the include flags)
// are CMake variables, not part of the File API: autograder/CMakeLists.txt writes them beside the
// manifests (grade-manifest/toolchain.json), as the build's own generator uses them.

constexpr const char* kFileApiClient = "client-workbook-grade";

void write_file_api_query(const fs::path& build_dir) {
  write_json(
      build_dir / ".cmake" / "api" / "v1" / "query" / kFileApiClient / "query.json",
      {{"requests",
        {{{"kind", "codemodel"}, {"version", 2}}, {{"kind", "toolchains"}, {"version", 1}}}}});
}

// The File API's answer for one build folder, and the rule templates of its languages.
struct FileApi {
  fs::path build_dir, reply;
  std::map<std::string, json> targets;           // by target name: the codemodel's target object
  std::map<std::string, std::string> compilers;  // by language: the compiler's path
  json rules;                                    // grade-manifest/toolchain.json "languages"

  static FileApi load(const fs::path& build_dir) {
    FileApi api;
    api.build_dir = build_dir;
    api.reply = build_dir / ".cmake" / "api" / "v1" / "reply";
    // The newest index (their names sort by time) holds our client's answer.
    std::vector<fs::path> indexes;
    if (fs::exists(api.reply))
      for (const auto& e : fs::directory_iterator(api.reply))
        if (e.path().filename().string().rfind("index-", 0) == 0) indexes.push_back(e.path());
    if (indexes.empty())
      throw std::runtime_error("CMake wrote no File API reply in " + api.reply.string() +
                               " (CMake 3.14 or newer is needed)");
    std::sort(indexes.begin(), indexes.end());
    const json index = read_json(indexes.back());
    const json& responses = index.at("reply").at(kFileApiClient).at("query.json").at("responses");
    for (const json& response : responses) {
      if (response.contains("error"))
        throw std::runtime_error("CMake's File API: " + response["error"].get<std::string>());
      const json object = read_json(api.reply / response.at("jsonFile").get<std::string>());
      if (response.at("kind") == "codemodel") {
        const json& configuration = object.at("configurations").at(0);
        for (const json& t : configuration.at("targets"))
          api.targets[t.at("name")] = read_json(api.reply / t.at("jsonFile").get<std::string>());
      } else if (response.at("kind") == "toolchains") {
        for (const json& t : object.at("toolchains"))
          if (t.contains("compiler") && t["compiler"].contains("path"))
            api.compilers[t.at("language")] = t["compiler"]["path"];
      }
    }
    const fs::path toolchain = build_dir / "grade-manifest" / "toolchain.json";
    if (!fs::exists(toolchain))
      throw std::runtime_error(toolchain.string() +
                               " is missing: the trusted build did not write its rules");
    api.rules = read_json(toolchain).at("languages");
    return api;
  }

  const json& target(const std::string& name) const {
    const auto t = targets.find(name);
    if (t == targets.end()) throw std::runtime_error("CMake's codemodel has no target " + name);
    return t->second;
  }
  const json& rules_of(const std::string& language) const {
    if (!rules.contains(language))
      throw std::runtime_error("the trusted build wrote no rules for " + language);
    return rules[language];
  }
  std::string compiler(const std::string& language) const {
    const auto c = compilers.find(language);
    if (c == compilers.end())
      throw std::runtime_error("CMake's toolchains name no " + language + " compiler");
    return c->second;
  }
};

// Fills a rule template ("<CMAKE_CXX_COMPILER> <DEFINES> <INCLUDES> <FLAGS> -o <OBJECT> -c
// <SOURCE>") word by word: a placeholder alone in its word becomes the words given for it; any
// other placeholder is an error (a rule this grader does not know how to fill).
std::vector<std::string> fill_rule(const std::string& rule,
                                   const std::map<std::string, std::vector<std::string>>& values,
                                   const std::string& what) {
  std::vector<std::string> argv;
  for (const std::string& word : split_command(rule)) {
    std::string expanded = word;
    std::vector<std::string> alone;
    bool is_alone = false;
    for (const auto& [name, words] : values) {
      const std::string placeholder = "<" + name + ">";
      if (word == placeholder) {
        alone = words;
        is_alone = true;
        break;
      }
      // Inside a word (-ccbin=<CMAKE_CUDA_HOST_COMPILER>): one value only.
      if (const auto at = expanded.find(placeholder); at != std::string::npos) {
        std::string joined;
        for (const std::string& w : words) joined += (joined.empty() ? "" : " ") + w;
        expanded.replace(at, placeholder.size(), joined);
      }
    }
    if (is_alone) {
      argv.insert(argv.end(), alone.begin(), alone.end());
      continue;
    }
    if (const auto open = expanded.find('<');
        open != std::string::npos && expanded.find('>', open) != std::string::npos)
      throw std::runtime_error("the rule of " + what +
                               " has a placeholder the grader cannot fill: " + word + " (in " +
                               rule + ")");
    argv.push_back(expanded);
  }
  return argv;
}

std::vector<std::string> words_of(const json& fragments, const char* role = nullptr) {
  std::vector<std::string> words;
  for (const json& f : fragments) {
    if (role && f.value("role", "") != role) continue;
    for (const std::string& w : split_command(f.at("fragment").get<std::string>()))
      words.push_back(w);
  }
  return words;
}

// The compile of each student source: the compile group of the lab's implementation target that
// holds it, through the language's compile rule, with @SRC@ and @OBJ@ for the paths.
std::vector<CompileRecipe> compile_recipes(const FileApi& api, const fs::path& src,
                                           const std::string& lab, const LabRecipe& recipe) {
  const json& target = api.target(lab + "_impl");
  std::vector<CompileRecipe> out;
  for (const std::string& source : recipe.sources) {
    const fs::path file = recipe.lab_dir / source;
    for (const json& s : items_of(target, "sources")) {
      const fs::path path = fs::path(s.at("path").get<std::string>()).is_absolute()
                                ? fs::path(s["path"].get<std::string>())
                                : src / s["path"].get<std::string>();
      if (path.lexically_normal() != file.lexically_normal() || !s.contains("compileGroupIndex"))
        continue;
      const json& group = target.at("compileGroups").at(s["compileGroupIndex"].get<std::size_t>());
      const std::string language = group.at("language");
      const json& rules = api.rules_of(language);
      CompileRecipe c;
      c.source = source;
      std::vector<std::string> defines, includes;
      for (const json& d : items_of(group, "defines"))
        defines.push_back("-D" + d.at("define").get<std::string>());
      for (const json& i : items_of(group, "includes")) {
        const std::string dir = i.at("path");
        const std::string flag =
            i.value("isSystem", false) ? rules.at("include_system_flag") : rules.at("include_flag");
        // "-isystem " takes the folder as its own word; "-I" and nvcc's "-isystem=" are one word
        // with it.
        if (!flag.empty() && flag.back() == ' ') {
          includes.push_back(flag.substr(0, flag.size() - 1));
          includes.push_back(dir);
        } else {
          includes.push_back(flag + dir);
        }
        c.include_dirs.push_back(dir);
      }
      const std::vector<std::string> flags = words_of(items_of(group, "compileCommandFragments"));
      // Relocatable device code needs a device-link step, which the codemodel does not describe.
      for (const std::string& f : flags)
        if (f == "-rdc=true" || f == "-dc" || f == "--relocatable-device-code=true")
          throw std::runtime_error(
              source + " is compiled with relocatable device code (" + f +
              "): the grader cannot replay its device link; compile the lab's CUDA sources whole");
      const std::map<std::string, std::vector<std::string>> values = {
          {"CMAKE_" + language + "_COMPILER", {api.compiler(language)}},
          {"CMAKE_" + language + "_HOST_COMPILER", {rules.value("host_compiler", "")}},
          {"DEFINES", defines},
          {"INCLUDES", includes},
          {"FLAGS", flags},
          {"CUDA_COMPILE_MODE",
           {"-c"}},  // whole compilation (the labs use no separable compilation)
          {"SOURCE", {"@SRC@"}},
          {"OBJECT", {"@OBJ@"}}};
      c.argv = fill_rule(rules.at("compile"), values, source);
      out.push_back(c);
      break;
    }
  }
  return out;
}

// The link of a target with the student's objects: the link rule of its linker language, filled
// with the codemodel's fragments; the student's archive stands as @IMPL@, the output as @OUT@.
LinkRecipe link_recipe(const FileApi& api, const std::string& target_name,
                       const fs::path& impl_archive) {
  const json& target = api.target(target_name);
  const json& link = target.at("link");
  const std::string language = link.at("language");
  const json& rules = api.rules_of(language);
  std::vector<std::string> objects;
  for (const json& s : items_of(target, "sources")) {
    // The objects of the object libraries it links; a source compiled for the target itself would
    // be compiled again per submission, which the grader does not do.
    if (!s.value("isGenerated", false) ||
        fs::path(s.at("path").get<std::string>()).extension() != ".o")
      throw std::runtime_error(target_name + " compiles " + s.at("path").get<std::string>() +
                               " itself: link the student's tests from object libraries only");
    objects.push_back(s["path"]);
  }
  std::vector<std::string> flags;
  for (const std::string& w : words_of(link.at("commandFragments"), "flags")) {
    if (w.rfind("-Wl,", 0) == 0) {
      // Newer CMake may ask the linker for a dependency file (-Wl,--dependency-file=<relative
      // path>): the build's bookkeeping, and a path that does not exist in the grader's workspace.
      std::string kept;
      std::istringstream options(w.substr(4));
      for (std::string option; std::getline(options, option, ',');)
        if (option.rfind("--dependency-file", 0) != 0) kept += "," + option;
      if (!kept.empty()) flags.push_back("-Wl" + kept);
      continue;
    }
    flags.push_back(w);
  }
  std::vector<std::string> libraries = words_of(link.at("commandFragments"), "libraryPath");
  for (const std::string& w : words_of(link.at("commandFragments"), "libraries"))
    libraries.push_back(w);
  const std::map<std::string, std::vector<std::string>> values = {
      {"CMAKE_" + language + "_COMPILER", {api.compiler(language)}},
      {"FLAGS", flags},
      {"CMAKE_" + language + "_LINK_FLAGS", split_command(rules.value("link_flags", ""))},
      {"LINK_FLAGS", {}},
      {"OBJECTS", objects},
      {"TARGET", {"@OUT@"}},
      {"LINK_LIBRARIES", libraries}};
  LinkRecipe recipe;
  bool found_impl = false;
  const std::vector<std::string> argv = fill_rule(rules.at("link_executable"), values, target_name);
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    const fs::path p = fs::path(w).is_absolute() ? fs::path(w) : api.build_dir / w;
    if (i > 0 && !w.empty() && w[0] != '-' && w[0] != '@' && fs::is_regular_file(p)) {
      if (fs::equivalent(p, impl_archive)) {
        recipe.argv.push_back("@IMPL@");
        found_impl = true;
        continue;
      }
      const std::string absolute = fs::weakly_canonical(p).string();
      recipe.argv.push_back(absolute);
      recipe.inputs.push_back(absolute);
      continue;
    }
    recipe.argv.push_back(w);
  }
  if (!found_impl)
    throw std::runtime_error("the link of " + target_name + " does not use " +
                             impl_archive.string());
  return recipe;
}

struct BuildDir {
  fs::path dir;
  std::vector<std::string> labs;  // numbers configured in it
  bool configured = false;
};

bool configure(const fs::path& src, BuildDir& b, const std::vector<std::string>& numbers,
               std::ostream& log, std::string& output) {
  write_file_api_query(b.dir);
  std::string list;
  for (const std::string& n : numbers) list += (list.empty() ? "" : ";") + n;
  const CommandResult r =
      run_command({"/usr/bin/env", "cmake", "-S", src.string(), "-B", b.dir.string(), "-G", "Ninja",
                   "-DCMAKE_BUILD_TYPE=Release", "-DWORKBOOK_IMPL=labs", "-DWORKBOOK_LABS=" + list,
                   "-DWORKBOOK_REGISTER_LAST_BUILD=OFF", "-DWORKBOOK_WERROR=OFF",
                   "-DWORKBOOK_HARNESS_TESTS=OFF", "-DWORKBOOK_BENCH=OFF",
                   "-DWORKBOOK_AUTOGRADER=ON", "-DWORKBOOK_GRADE_PREPARE=ON"});
  output = r.output;
  log << "  configure " << b.dir.filename().string() << " (labs " << list
      << "): " << (r.code == 0 ? "ok" : "FAILED") << "\n";
  b.labs = numbers;
  b.configured = r.code == 0;
  return b.configured;
}

// Under the cache's exclusive lock, after a generation became current: every generation that the
// current recipes do not `keep` and no grade holds is removed (one still held stays for the next
// prepare), and so are the files of the cache's layout before generations (src/, build*/, symbols
// and call times, the canary, the log).
void remove_unused_generations(const fs::path& root, const std::set<fs::path>& keep,
                               std::ostream& log) {
  const std::regex earlier_layout(
      R"(src|build(-\d\d)?|(symbols|call-times)-\d\d\.txt|canary(\.json)?|prepare\.log)");
  const std::vector<fs::directory_entry> entries(fs::directory_iterator(root), {});
  for (const fs::directory_entry& e : entries) {
    const std::string name = e.path().filename().string();
    if (name.rfind("gen-", 0) == 0 && !keep.count(e.path()) && e.is_directory()) {
      FileLock unused(e.path() / kLockFile, FileLock::Mode::exclusive_if_free);
      if (unused.held())
        fs::remove_all(e.path());
      else
        log << "  " << name << " is still in use by a grade: the next prepare removes it\n";
    } else if (std::regex_match(name, earlier_layout)) {
      fs::remove_all(e.path());
    }
  }
}

}  // namespace

std::map<std::string, char> defined_symbols(const std::vector<std::string>& lines) {
  // nm -P: "name type value size"; archives add "archive[member]:" lines.
  std::map<std::string, char> symbols;
  for (const std::string& line : lines) {
    const auto space = line.find(' ');
    if (space == std::string::npos || space + 1 >= line.size()) continue;
    const std::string name = line.substr(0, space);
    const char type = line[space + 1];
    if (std::string("TDBRWVuiGSC").find(type) == std::string::npos) continue;
    auto& kind = symbols[name];
    // Strong beats weak when both appear.
    if (kind == 0 || (kind == 'W' && type != 'W' && type != 'V')) kind = (type == 'V') ? 'W' : type;
  }
  return symbols;
}

// The hidden tests run on the reference (a plain child, as in the project's CI), each call timed:
// the slowest call of each function. A function missing here (a GPU lab on a machine without a
// GPU) keeps the blanket per-call timeout.
std::map<std::string, double> time_reference_calls(const LabRecipe& r, const std::string& worker,
                                                   const fs::path& root, std::ostream& log) {
  std::map<std::string, double> slowest;
  const fs::path times = root / ("call-times-" + r.number + ".txt");
  fs::remove(times);
  log << "  lab" << r.number << ": timing the reference's calls in the hidden tests ...\n"
      << std::flush;
  const CommandResult run = run_command({"/usr/bin/env", "WORKBOOK_SEALED_WORKER=" + worker,
                                         "WORKBOOK_SEALED_TIMES=" + times.string(),
                                         std::string("WORKBOOK_SEALED_GPU=") + (r.gpu ? "1" : "0"),
                                         "WORKBOOK_SEED=1", r.checker, "--gtest_brief=1"},
                                        {}, 1200);
  std::ifstream in(times);
  std::string function;
  double seconds = 0;
  while (in >> function >> seconds) slowest[function] = std::max(slowest[function], seconds);
  if (run.code != 0 && run.code != workbook::kSkipReturnCode)
    log << "  lab" << r.number << ": the hidden tests did not all pass on the reference (exit code "
        << run.code << "): the per-call deadlines come from the calls that ran\n";
  return slowest;
}

// A cache made on another CPU model may not even run here: the CPU is part of the identity.
std::string build_identity() {
  const CommandResult r =
      run_command({"/bin/sh", "-c",
                   "c++ --version | head -1; cmake --version | head -1; "
                   "nvcc --version 2>/dev/null | tail -1; grep -m1 '^model name' /proc/cpuinfo; "
                   "grep -m1 '^flags' /proc/cpuinfo"});
  return r.output;
}

CommandResult build_with_progress(const fs::path& dir, int jobs, const std::string& what,
                                  std::ostream& log, const std::vector<std::string>& extra,
                                  double every_seconds) {
  // The steps to do: a dry run prints "[k/N] ..." for each.
  int total = 0;
  {
    std::vector<std::string> dry = {"/usr/bin/env", "cmake", "--build", dir.string(), "--", "-n"};
    dry.insert(dry.end(), extra.begin(), extra.end());
    std::istringstream lines(run_command(dry).output);
    for (std::string line; std::getline(lines, line);)
      if (line.size() > 3 && line[0] == '[')
        if (const auto slash = line.find('/'); slash != std::string::npos)
          total = std::max(total, std::atoi(line.c_str() + slash + 1));
  }
  // Steps done: lines .ninja_log gains (one per output of each finished step).
  const fs::path ninja_log = dir / ".ninja_log";
  auto lines_logged = [&] {
    std::ifstream in(ninja_log);
    return static_cast<int>(
        std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
  };
  const int before = lines_logged();
  std::mutex m;
  std::condition_variable cv;
  bool finished = false;
  const auto start = std::chrono::steady_clock::now();
  std::thread reporter([&] {
    std::unique_lock lock(m);
    while (!cv.wait_for(lock, std::chrono::duration<double>(every_seconds),
                        [&] { return finished; })) {
      const int done = std::min(total, lines_logged() - before);
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      log << "  " << what << ": " << done << " of " << total << " steps";
      if (done > 0 && done < total)
        log << ", about "
            << std::max(1, static_cast<int>(elapsed * (total - done) / done / 60 + 0.5))
            << " min left";
      log << " (" << static_cast<int>(elapsed) << " s so far)\n" << std::flush;
    }
  });
  std::vector<std::string> argv = {"/usr/bin/env", "cmake", "--build",
                                   dir.string(),   "-j",    std::to_string(jobs)};
  if (!extra.empty()) {
    argv.push_back("--");
    argv.insert(argv.end(), extra.begin(), extra.end());
  }
  CommandResult r = run_command(argv);
  {
    std::lock_guard lock(m);
    finished = true;
  }
  cv.notify_all();
  reporter.join();
  return r;
}

CommandResult run_command(const std::vector<std::string>& argv, const fs::path& cwd,
                          double timeout_seconds) {
  SandboxSpec spec;
  spec.argv = argv;
  spec.isolate = false;
  for (char** e = environ; *e; ++e) spec.env.push_back(*e);
  spec.cwd = cwd.empty() ? fs::current_path().string() : cwd.string();
  spec.limits.wall_seconds = timeout_seconds;
  spec.limits.cpu_seconds = timeout_seconds;
  spec.limits.memory_bytes = std::uint64_t{1} << 40;
  spec.limits.file_bytes = std::uint64_t{1} << 40;
  spec.limits.open_files = 4096;
  spec.limits.output_keep_bytes = 16 << 20;
  spec.limits.output_kill_bytes = std::uint64_t{1} << 34;
  const RunResult r = run_sandboxed(spec);
  CommandResult out;
  out.output = r.output;
  out.code = r.started && r.exited ? r.code : -1;
  if (!r.started)
    out.output += r.start_error;
  else if (!r.exited)
    out.output += "\n" + r.describe();
  return out;
}

FileLock::FileLock(const fs::path& file, Mode mode) {
  fs::create_directories(file.parent_path());
  fd_ = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0)
    throw std::runtime_error("cannot lock " + file.string() + ": " + std::strerror(errno));
  const int how = mode == Mode::shared ? LOCK_SH : LOCK_EX;
  const int wait = mode == Mode::exclusive_if_free ? LOCK_NB : 0;
  int r = 0;
  while ((r = flock(fd_, how | wait)) != 0 && errno == EINTR) {
  }
  held_ = r == 0;
  if (!held_ && mode != Mode::exclusive_if_free)
    throw std::runtime_error("cannot lock " + file.string() + ": " + std::strerror(errno));
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);
}

CacheInUse::CacheInUse(const fs::path& root) {
  // Under the cache's lock no prepare removes a generation: the one read here is held before the
  // lock is let go.
  FileLock reading(root / kLockFile, FileLock::Mode::shared);
  cache_ = Cache::load(root);
  for (const fs::path& generation : cache_.generations())
    hold_.push_back(std::make_unique<FileLock>(generation / kLockFile, FileLock::Mode::shared));
}

nlohmann::json LabRecipe::to_json() const {
  json compiles_json = json::array();
  for (const CompileRecipe& c : compiles)
    compiles_json.push_back(
        {{"source", c.source}, {"argv", c.argv}, {"include_dirs", c.include_dirs}});
  json links_json = json::object();
  for (const auto& [name, l] : links) links_json[name] = {{"argv", l.argv}, {"inputs", l.inputs}};
  return {{"number", number},
          {"folder", folder},
          {"generation", generation.filename().string()},
          {"key", key},
          {"available", available},
          {"unavailable", unavailable},
          {"gpu", gpu},
          {"sources", sources},
          {"student_files", student_files},
          {"compiles", compiles_json},
          {"links", links_json},
          {"lab_dir", lab_dir.string()},
          {"build_dir", build_dir.string()},
          {"perf_reference", perf_reference},
          {"profile", profile},
          {"checker", checker},
          {"call_seconds", call_seconds},
          {"probe", probe},
          {"visible_tests", visible_tests},
          {"hidden_tests", hidden_tests},
          {"perf_cases", perf_cases},
          {"symbols", symbols.string()},
          {"rubric_warnings", rubric_warnings}};
}

LabRecipe LabRecipe::from_json(const nlohmann::json& j) {
  LabRecipe r;
  r.number = j.at("number");
  r.folder = j.at("folder");
  r.key = j.value("key", "");
  r.available = j.at("available");
  r.unavailable = j.value("unavailable", "");
  r.gpu = j.value("gpu", false);
  r.sources = j.value("sources", std::vector<std::string>{});
  r.student_files = j.value("student_files", std::vector<std::string>{});
  for (const json& c : items_of(j, "compiles"))
    r.compiles.push_back(
        {c.at("source"), c.at("argv"), c.value("include_dirs", std::vector<std::string>{})});
  for (const auto& [name, l] : items_of(j, "links").items())
    r.links[name] = {l.at("argv"), l.at("inputs")};
  r.lab_dir = j.value("lab_dir", "");
  r.build_dir = j.value("build_dir", "");
  r.perf_reference = j.value("perf_reference", "");
  r.profile = j.value("profile", "");
  r.checker = j.value("checker", "");
  r.call_seconds = j.value("call_seconds", std::map<std::string, double>{});
  r.probe = j.value("probe", "");
  r.visible_tests = j.value("visible_tests", std::vector<std::string>{});
  r.hidden_tests = j.value("hidden_tests", std::vector<std::string>{});
  r.perf_cases = j.value("perf_cases", std::vector<std::string>{});
  r.symbols = j.value("symbols", "");
  r.rubric_warnings = j.value("rubric_warnings", std::vector<std::string>{});
  return r;
}

std::set<fs::path> Cache::generations() const {
  std::set<fs::path> folders = {dir};
  for (const auto& [number, lab] : labs) folders.insert(lab.generation);
  return folders;
}

Rubric Cache::rubric(const LabRecipe& lab) const {
  const fs::path path = lab.src() / "autograder" / "labs" / lab.folder / "rubric.json";
  if (fs::exists(path)) return Rubric::load(path.string(), lab.number);
  return Rubric::default_for(lab.number);
}

Cache Cache::load(const fs::path& root) {
  const fs::path file = root / "recipes.json";
  if (!fs::exists(file))
    throw std::runtime_error(
        root.string() + " is not a prepared grading cache: run `workbook-grade prepare` first");
  const json j = read_json(file);
  if (j.value("format", 0) != kFormat)
    throw std::runtime_error(
        root.string() +
        " was prepared by another version of the grader: run `workbook-grade prepare`");
  Cache c;
  const std::string generation = j.value("generation", "");
  // A generation's own folder is a cache too, pinned to that generation (the canary proves a new
  // generation before it is made current; a batch grades a whole class with one).
  const bool pinned = !generation.empty() && root.filename() == generation;
  c.root = pinned ? root.parent_path() : root;
  c.dir = pinned ? root : root / generation;
  if (generation.empty() || !fs::is_directory(c.dir))
    throw std::runtime_error(root.string() + " names a generation that is not there (" +
                             c.dir.string() + "): run `workbook-grade prepare --force`");
  c.key = j.at("key");
  c.prepared_at = j.value("prepared_at", "");
  c.ceilings = j.value("ceilings", "");
  for (const auto& [number, lab] : j.at("labs").items()) {
    LabRecipe r = LabRecipe::from_json(lab);
    // A lab lives in the generation that built it: this one, or an earlier one it was kept from.
    r.generation = c.root / lab.value("generation", generation);
    if (!fs::is_directory(r.generation))
      throw std::runtime_error(root.string() + ": the generation of lab " + number + " (" +
                               r.generation.string() +
                               ") is not there: run `workbook-grade prepare --force`");
    c.labs[number] = r;
  }
  return c;
}

TreeKeys tree_keys(const fs::path& trusted, const fs::path& overlay) {
  // Every file, as "path NUL hash", in the list of the part it belongs to: a lab's (its folders
  // under labs/, solutions/ and autograder/labs/) or the shared part.
  std::string shared;
  std::map<std::string, std::string> labs;
  const std::regex lab_folder(R"((labs|solutions|autograder/labs)/(\d\d)_[^/]+/.*)");
  for (const fs::path& tree : {trusted, overlay}) {
    if (tree.empty()) continue;
    const std::string side = tree == trusted ? "trusted:" : "overlay:";
    for (const std::string& name : project_files(tree)) {  // relative, with '/'
      const std::string line = side + name + '\0' + hash_hex(read_text(tree / name)) + '\n';
      std::smatch m;
      if (std::regex_match(name, m, lab_folder))
        labs[m[2]] += line;
      else
        shared += line;
    }
  }
  TreeKeys keys;
  keys.shared = hash_hex(std::to_string(kFormat) + '\n' + shared + build_identity());
  for (const auto& [n, files] : labs) keys.labs[n] = hash_hex(keys.shared + '\n' + files);
  return keys;
}

Cache prepare(const PrepareOptions& o, std::ostream& log) {
  const fs::path root = fs::absolute(o.cache).lexically_normal();
  const fs::path trusted = fs::absolute(o.trusted).lexically_normal();
  if (!fs::exists(trusted / "labs") || !fs::exists(trusted / "common"))
    throw std::runtime_error(trusted.string() +
                             " is not a perf-workbook tree (no labs/ or common/)");
  // The keys: what the trusted builds depend on. A lab whose key is the same is kept as it is;
  // which labs are wanted is not part of them (a cache prepared for labs 01-04 serves a grade of
  // lab 01 as it is, and one that lacks a wanted lab builds that lab alone).
  const TreeKeys keys = tree_keys(trusted, o.overlay);
  const std::string& key = keys.shared;
  const auto key_of = [&](const std::string& n) {
    const auto k = keys.labs.find(n);
    return k == keys.labs.end() ? std::string() : k->second;
  };
  std::vector<std::string> wanted = o.labs;
  if (wanted.empty())
    for (const fs::path& tree : {trusted, o.overlay})
      if (!tree.empty())
        for (const std::string& folder : list_labs(tree)) wanted.push_back(folder.substr(0, 2));
  // The labs of the cache as it is, when it was prepared from a tree with the same shared part
  // (else none): each one's recipe, whether its build failed, and whether its own files changed.
  struct Prepared {
    std::map<std::string, json> labs;
    std::set<std::string> failed;
    std::set<std::string> changed;
  };
  auto prepared_labs = [&] {
    Prepared p;
    if (o.force || !fs::exists(root / "recipes.json")) return p;
    try {
      const json j = read_json(root / "recipes.json");
      if (j.value("format", 0) != kFormat || j.value("key", "") != key) return p;
      Cache::load(root);  // throws unless every lab's generation is there
      for (const auto& [number, lab] : j.at("labs").items()) {
        p.labs[number] = lab;
        if (lab.value("key", "") != key_of(number)) p.changed.insert(number);
      }
      for (const json& n : j.value("failed_labs", json::array())) p.failed.insert(n);
    } catch (const std::exception&) {
      p = {};
    }
    return p;
  };
  auto up_to_date = [&] {
    // A cache whose build failed somewhere is never "up to date": the next prepare tries again.
    const Prepared p = prepared_labs();
    return !p.labs.empty() && p.failed.empty() && p.changed.empty() &&
           std::all_of(wanted.begin(), wanted.end(),
                       [&](const std::string& n) { return p.labs.count(n) > 0; });
  };
  {
    // Reading whether it is up to date takes the cache's lock shared, as a grade's start does.
    std::optional<FileLock> shared;
    if (fs::exists(root)) shared.emplace(root / kLockFile, FileLock::Mode::shared);
    if (up_to_date()) {
      log << "grading cache " << root.string() << " is up to date (trusted tree "
          << key.substr(0, 16) << ")\n";
      return Cache::load(root);
    }
  }
  require_committed(trusted, o.allow_dirty, "the grading cache (@stub, @reference, the build)");
  // One prepare at a time builds; the grades running meanwhile go on with the generation they hold.
  std::optional<FileLock> preparing;
  preparing.emplace(root / ".prepare.lock", FileLock::Mode::exclusive_if_free);
  if (!preparing->held()) {
    log << "another prepare is building " << root.string() << ": waiting for it ...\n"
        << std::flush;
    preparing.emplace(root / ".prepare.lock", FileLock::Mode::exclusive);
  }
  if (up_to_date()) return Cache::load(root);  // prepared meanwhile by another process
  // A lab prepared before from the same files stays where it is, in the generation that built it:
  // only the labs wanted that the cache lacks, and those whose build failed or whose files
  // changed since, are built.
  const Prepared before = prepared_labs();
  std::set<std::string> to_build(wanted.begin(), wanted.end());
  to_build.insert(before.failed.begin(), before.failed.end());
  to_build.insert(before.changed.begin(), before.changed.end());
  json labs_json = json::object();  // the recipes: the labs kept, then those built
  for (const auto& [n, lab] : before.labs)
    if (!before.failed.count(n) && !before.changed.count(n)) {
      to_build.erase(n);
      labs_json[n] = lab;
    }
  for (const std::string& n : before.changed)
    log << "  lab" << n << ": its files changed since it was prepared: built again\n";
  // A new generation, beside the one grades may be using; removed if this prepare does not finish.
  std::string stamp;
  for (char ch : utc_now())
    if (std::isalnum(static_cast<unsigned char>(ch))) stamp += ch;
  const std::string generation = "gen-" + stamp + "-" + random_hex(3);
  const fs::path dir = root / generation;
  struct Unfinished {
    fs::path dir;
    bool done = false;
    ~Unfinished() {
      std::error_code ignored;
      if (!done) fs::remove_all(dir, ignored);
    }
  } unfinished{dir};
  log << "preparing the grading cache in " << dir.string() << " from " << trusted.string() << "\n";
  // Where the time goes, said at the end: what to look at when a prepare is slow.
  const auto started = std::chrono::steady_clock::now();
  auto phase_start = started;
  std::string phases;
  const auto phase_done = [&](const std::string& name) {
    const auto now = std::chrono::steady_clock::now();
    phases +=
        (phases.empty() ? "" : ", ") + name + " " +
        std::to_string(std::lround(std::chrono::duration<double>(now - phase_start).count())) +
        " s";
    phase_start = now;
  };
  const fs::path src = dir / "src";
  copy_files(trusted, project_files(trusted), src);
  if (!o.overlay.empty()) copy_tree(o.overlay, src);
  phase_done("copy");

  for (const auto& [n, lab] : labs_json.items())
    log << "  lab" << n << ": kept as " << lab.value("generation", std::string()) << " built it\n";
  std::vector<std::string> folders;
  {
    const std::vector<std::string> all = list_labs(src);
    for (const std::string& n : to_build) {
      const auto f = std::find_if(all.begin(), all.end(),
                                  [&](const std::string& x) { return x.substr(0, 2) == n; });
      if (f == all.end())
        throw std::runtime_error("there is no lab " + n + " in " + trusted.string());
      folders.push_back(*f);
    }
  }
  std::vector<std::string> numbers;
  for (const std::string& f : folders) numbers.push_back(f.substr(0, 2));

  // One build for every lab; a lab that does not configure with the others gets a build of its own.
  std::string prepare_log;
  std::vector<BuildDir> builds;
  std::map<std::string, std::size_t> build_of;
  std::map<std::string, std::string> failed;
  {
    BuildDir all{dir / "build", {}, false};
    std::string out;
    if (configure(src, all, numbers, log, out)) {
      builds.push_back(all);
      for (const std::string& n : numbers) build_of[n] = 0;
    } else {
      prepare_log += out;
      for (const std::string& n : numbers) {
        BuildDir one{dir / ("build-" + n), {}, false};
        if (configure(src, one, {n}, log, out)) {
          build_of[n] = builds.size();
          builds.push_back(one);
        } else {
          failed[n] =
              "the trusted build of lab " + n + " does not configure:\n" + first_errors(out, 20);
        }
        prepare_log += out;
      }
    }
  }
  phase_done("configure");
  for (BuildDir& b : builds) {
    log << "  building " << b.dir.filename().string() << " with " << o.jobs << " jobs ...\n"
        << std::flush;
    const CommandResult r = build_with_progress(
        b.dir, o.jobs, "building " + b.dir.filename().string(), log, {"-k", "0"});
    prepare_log += r.output;
    log << "  build " << b.dir.filename().string() << ": "
        << (r.code == 0 ? "ok" : "FAILED (labs whose parts built are still graded)") << "\n";
  }

  phase_done("build");
  // Ceilings: measured once per machine (the probe skips a measurement that is still valid).
  fs::path ceilings = root / "ceilings.json";
  std::string probe;
  for (const BuildDir& b : builds) {
    for (const std::string& n : b.labs) {
      const fs::path m = b.dir / "grade-manifest" / ("lab" + n + ".json");
      if (fs::exists(m)) probe = read_json(m).value("probe", "");
    }
  }
  if (!probe.empty() && fs::exists(probe)) {
    log << "  measuring this machine's ceilings (or reusing " << ceilings.string() << ") ...\n"
        << std::flush;
    const CommandResult r = run_command({probe, "--cache", ceilings.string()});
    prepare_log += r.output;
    if (r.code != 0) log << "  the probe failed: perf grading will measure the ceilings itself\n";
  }

  phase_done("ceilings");
  // Recipes.
  std::vector<fs::path> public_files, run_only;
  std::vector<std::string>
      failed_labs;  // unavailable because something failed, not left out by design
  for (const std::string& folder : folders) {
    const std::string n = folder.substr(0, 2);
    const std::string lab = "lab" + n;
    LabRecipe r;
    r.number = n;
    r.folder = folder;
    r.generation = dir;
    r.key = key_of(n);
    r.lab_dir = src / "labs" / folder;
    bool left_out = false;  // the build left the lab out (a CUDA lab without the CUDA toolkit)
    if (failed.count(n)) {
      r.unavailable = failed[n];
    } else {
      const BuildDir& b = builds[build_of[n]];
      r.build_dir = b.dir;
      try {
        const fs::path manifest_path = b.dir / "grade-manifest" / (lab + ".json");
        if (!fs::exists(manifest_path)) {
          left_out = true;
          throw std::runtime_error("the build left " + lab +
                                   " out on this machine (a CUDA lab without the CUDA toolkit: "
                                   "install it, nvcc on the PATH, and prepare again)");
        }
        const json m = read_json(manifest_path);
        r.sources = m.at("student_files").get<std::vector<std::string>>();
        r.gpu = m.value("gpu", false);
        const Rubric rubric = Cache{root, dir, key, "", ceilings, {}}.rubric(r);
        r.student_files = r.sources;
        for (const std::string& extra : rubric.extra_files) r.student_files.push_back(extra);
        const FileApi api = FileApi::load(b.dir);
        r.compiles = compile_recipes(api, src, lab, r);
        if (r.compiles.size() != r.sources.size())
          throw std::runtime_error("CMake's codemodel lacks the compile of a student source of " +
                                   lab);
        const fs::path impl = m.at("impl_archive").get<std::string>();
        for (const auto& [name, link] : m.at("link").items()) {
          const fs::path file = link.at("file").get<std::string>();
          if (!fs::exists(file))
            throw std::runtime_error(link.at("target").get<std::string>() +
                                     " did not build (see prepare.log)");
          r.links[name] = link_recipe(api, link.at("target"), impl);
        }
        const json& t = m.at("trusted");
        r.perf_reference = t.value("perf_reference", "");
        if (!r.perf_reference.empty()) run_only.push_back(r.perf_reference);
        r.checker = t.value("checker", "");
        r.profile = m.value("profile", "");
        r.probe = m.value("probe", "");
        const std::string list_tests = t.at("list_tests");
        const CommandResult listed = run_command({list_tests, "--gtest_list_tests"});
        if (listed.code != 0)
          throw std::runtime_error("cannot list the tests of " + lab + ":\n" + listed.output);
        r.visible_tests = parse_gtest_list(listed.output);
        if (!r.checker.empty()) {
          const CommandResult hidden = run_command({r.checker, "--gtest_list_tests"});
          if (hidden.code != 0)
            throw std::runtime_error("cannot list the hidden tests of " + lab + ":\n" +
                                     hidden.output);
          r.hidden_tests = parse_gtest_list(hidden.output);
          if (t.contains("sealed_reference"))
            r.call_seconds = time_reference_calls(r, t["sealed_reference"], dir, log);
        }
        if (t.contains("list_perf")) {
          const CommandResult perf = run_command({t["list_perf"].get<std::string>(), "--list"});
          if (perf.code != 0)
            throw std::runtime_error("cannot list the perf cases of " + lab + ":\n" + perf.output);
          for (const std::string& line : lines_of(perf.output))
            if (!line.empty()) r.perf_cases.push_back(line);
          if (r.perf_reference.empty() && (r.profile.empty() || !fs::exists(r.profile)))
            throw std::runtime_error(
                lab + " has perf cases but neither a reference solution nor a reference profile");
        }
        // The symbols of every trusted input of the student's links: a submission may not redefine
        // them.
        std::vector<std::string> nm = {"/usr/bin/env", "nm", "-P", "-g", "--defined-only"};
        std::set<std::string> inputs;
        for (const auto& [name, link] : r.links)
          inputs.insert(link.inputs.begin(), link.inputs.end());
        nm.insert(nm.end(), inputs.begin(), inputs.end());
        const CommandResult symbols = run_command(nm);
        if (symbols.code != 0)
          throw std::runtime_error("nm failed on the trusted link inputs:\n" +
                                   symbols.output.substr(0, 2000));
        std::string list;
        for (const auto& [name, kind] : defined_symbols(lines_of(symbols.output)))
          list += std::string(1, kind) + " " + name + "\n";
        r.symbols = dir / ("symbols-" + n + ".txt");
        write_text_atomic(r.symbols, list);
        public_files.insert(public_files.end(), inputs.begin(), inputs.end());
        // Does the rubric cover every test, and does each of its rules match one?
        auto check = [&](Source source, const std::vector<std::string>& tests) {
          std::vector<bool> used(rubric.rules.size());
          for (const std::string& t : tests) {
            const Rule* rule = rubric.find(source, t);
            if (!rule)
              r.rubric_warnings.push_back(std::string(to_string(source)) + " test " + t +
                                          " is in no rule: it counts 0 of 0");
            else
              used[static_cast<std::size_t>(rule - rubric.rules.data())] = true;
          }
          for (std::size_t i = 0; i < rubric.rules.size(); ++i)
            if (rubric.rules[i].source == source && !used[i] && !rubric.path.empty())
              r.rubric_warnings.push_back("rule " + std::to_string(i) + " (" + to_string(source) +
                                          " " + rubric.rules[i].match + ") matches no test");
        };
        check(Source::visible, r.visible_tests);
        check(Source::hidden, r.hidden_tests);
        check(Source::perf, r.perf_cases);
        r.available = true;
      } catch (const std::exception& e) {
        r.unavailable = e.what();
      }
    }
    if (!r.available && !left_out) failed_labs.push_back(n);
    log << "  " << lab << ": " << (r.available ? "ready" : "NOT AVAILABLE: " + r.unavailable)
        << "\n";
    if (r.available) {
      log << "    student files: ";
      for (const std::string& f : r.student_files) log << "labs/" << folder << "/" << f << " ";
      log << "\n    " << r.visible_tests.size() << " visible tests, " << r.hidden_tests.size()
          << " hidden tests, " << r.perf_cases.size() << " perf cases\n";
      for (const std::string& w : r.rubric_warnings) log << "    rubric warning: " << w << "\n";
    }
    labs_json[n] = r.to_json();
  }
  write_text_atomic(dir / "prepare.log", prepare_log);

  // Solutions, hidden tests and rubrics stay readable by the grader alone.
  set_permissions(dir, {src / "common", src / "labs", src / "cmake"}, public_files, run_only);
  for (const fs::path& d : {root, dir})
    fs::permissions(d, fs::perms::others_exec | fs::perms::group_exec, fs::perm_options::add);

  const json recipes = {{"format", kFormat},           {"key", key},
                        {"generation", generation},    {"prepared_at", utc_now()},
                        {"trusted", trusted.string()}, {"ceilings", ceilings.string()},
                        {"labs", labs_json},           {"complete", failed_labs.empty()},
                        {"failed_labs", failed_labs}};
  write_json(dir / "recipes.json", recipes);
  phase_done("recipes (the hidden tests' calls timed on the reference)");
  // Proved before it is made current: the grades that start meanwhile use the proved generation.
  if (o.prove) {
    o.prove(dir);
    phase_done("canary");
  }
  {
    // The switch: a grade that starts from now on gets the new generation.
    FileLock switching(root / kLockFile, FileLock::Mode::exclusive);
    write_json(root / "recipes.json", recipes);
    unfinished.done = true;
    remove_unused_generations(root, Cache::load(root).generations(), log);
  }
  log << "prepared in "
      << std::lround(
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count())
      << " s: " << phases << "\n";
  if (!failed_labs.empty()) {
    std::string list;
    for (const std::string& n : failed_labs) list += (list.empty() ? "" : ", ") + n;
    log << "the trusted build of lab(s) " << list << " failed (see above and "
        << (dir / "prepare.log").string()
        << "): they are not graded, and the next prepare (or grade) builds again\n";
  }
  return Cache::load(root);
}

}  // namespace workbook::grade
