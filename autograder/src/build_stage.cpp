// Build (see build_stage.hpp).
#include "build_stage.hpp"

#include <grade/gpu_access.hpp>

#include "audit_stage.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace workbook::grade {

// Folders a compile or link needs besides the system folders and its inputs: the compiler's own
// installation when it lives elsewhere (a toolchain under /sw/gcc-13, a CUDA toolkit under
// /sw/cuda: the folder above its bin/, for its headers, libraries and helpers, nvcc's host compiler
// included) and the link's -L folders.
std::vector<std::string> tool_folders(const std::vector<std::string>& argv) {
  std::vector<std::string> folders;
  const auto add = [&](const std::string& path, bool installation) {
    std::error_code ec;
    if (path.empty() || path[0] != '/' || !fs::exists(path, ec)) return;
    for (fs::path p : {fs::path(path), fs::canonical(path, ec)}) {
      if (p.empty()) continue;
      if (installation)
        p = p.parent_path().filename() == "bin" ? p.parent_path().parent_path() : p.parent_path();
      if (!under_system_folder(p.string()) &&
          std::find(folders.begin(), folders.end(), p.string()) == folders.end())
        folders.push_back(p.string());
    }
  };
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (i == 0) add(a, true);
    for (const char* option : {"-ccbin=", "--compiler-bindir="})
      if (a.rfind(option, 0) == 0) add(a.substr(std::strlen(option)), true);
    if ((a == "-ccbin" || a == "--compiler-bindir") && i + 1 < argv.size()) add(argv[i + 1], true);
    if (a.rfind("-L", 0) == 0 && a.size() > 2) add(a.substr(2), false);
  }
  return folders;
}

std::string grader_file_fault(const std::string& output, const fs::path& cache,
                              const fs::path& work, const fs::path& cwd) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    for (const auto& [words, anywhere] : {std::pair<std::string, bool>{": Permission denied", true},
                                          {": No such file or directory", false}}) {
      const std::size_t at = line.find(words);
      if (at == std::string::npos) continue;
      // The file is the last word before the words ("ld: cannot find /c/lib.a: ...",
      // "cc1plus: error: labs/01_relu: ...", "fatal error: /c/x.hpp: ...").
      const std::string before = line.substr(0, at);
      const std::size_t space = before.find_last_of(" \t");
      const std::string name = space == std::string::npos ? before : before.substr(space + 1);
      if (name.empty()) continue;
      const fs::path file = fs::path(name).is_absolute() ? fs::path(name) : cwd / name;
      if (is_within(file, cache) || (anywhere && is_within(file, work))) return line;
    }
  }
  return "";
}

namespace {

// Throws EnvironmentError when a failed compile or link failed on a file of the grader's.
void blame_the_grader_if_its_file(const std::string& output, const Context& c,
                                  const std::string& step) {
  const std::string line = grader_file_fault(output, c.cache.root, c.ws.root, c.ws.tmp());
  if (line.empty()) return;
  throw EnvironmentError(
      step + " failed on a file of the grader's own, not the student's (" + line +
      "). The sandbox's user must be able to read the grading cache and the work folder: prepare "
      "the cache again (`workbook-grade prepare --force`; the grader sets its own umask 022, but "
      "an ACL, a mount option or a folder above it may still shut that user out), then grade "
      "again");
}

}  // namespace

BuildStep build_lab(Context& c, const LabRecipe& lab, const Rubric& rubric) {
  BuildStep step;
  const std::string name = lab.name();
  c.ws.give(c.ws.obj(name));
  c.ws.give(c.ws.bin(name));
  std::vector<std::string> objects;
  for (const CompileRecipe& compile : lab.compiles) {
    const fs::path source = c.ws.src() / "labs" / lab.folder / compile.source;
    const fs::path object = c.ws.obj(name) / (fs::path(compile.source).filename().string() + ".o");
    SandboxSpec s = base_spec(c, rubric, rubric.compile_seconds);
    s.limits.memory_bytes = std::max<std::uint64_t>(rubric.memory_bytes, 4ull << 30);
    s.limits.file_bytes = std::max<std::uint64_t>(rubric.file_bytes, 512ull << 20);
    s.limits.output_keep_bytes = 256 << 10;
    for (const std::string& a : compile.argv)
      s.argv.push_back(a == "@SRC@" ? source.string() : a == "@OBJ@" ? object.string() : a);
    s.argv.insert(s.argv.end() - 4, "-fdiagnostics-color=never");
    for (const std::string& d : compile.include_dirs) s.mounts.push_back({d, false});
    for (const std::string& d : tool_folders(s.argv)) s.mounts.push_back({d, false});
    s.mounts.push_back({c.ws.src().string(), false});
    s.mounts.push_back({c.ws.obj(name).string(), true});
    const RunResult r = run_sandboxed(s);
    if (!r.ok()) {
      blame_the_grader_if_its_file(r.output, c, "compiling " + compile.source);
      step.status = LabStatus::compile_error;
      std::string text = r.exited ? first_errors(student_paths(r.output, c.ws, c.cache))
                                  : r.describe() + "\n" + student_paths(r.output, c.ws, c.cache);
      step.output = "labs/" + lab.folder + "/" + compile.source + " does not compile:\n" + text;
      return step;
    }
    objects.push_back(object.string());
  }
  // The symbol audit, between compile and link: nothing the student defines replaces the harness's.
  {
    const SymbolAudit audit = audit_objects(c, lab, rubric, objects);
    if (!audit.ok()) {
      step.status = LabStatus::symbol_error;
      step.output = lab.edit() + " defines symbols a submission may not define:\n";
      for (std::size_t i = 0; i < audit.problems.size() && i < 10; ++i)
        step.output += "  - " + audit.problems[i] + "\n";
      return step;
    }
  }
  for (const auto& [target, link] : lab.links) {
    SandboxSpec s = base_spec(c, rubric, 180);
    s.limits.memory_bytes = std::max<std::uint64_t>(rubric.memory_bytes, 4ull << 30);
    s.limits.file_bytes = std::max<std::uint64_t>(rubric.file_bytes, 512ull << 20);
    s.limits.output_keep_bytes = 256 << 10;
    for (const std::string& a : link.argv) {
      if (a == "@IMPL@")
        s.argv.insert(s.argv.end(), objects.begin(), objects.end());
      else if (a == "@OUT@")
        s.argv.push_back((c.ws.bin(name) / target).string());
      else
        s.argv.push_back(a);
    }
    for (const std::string& input : link.inputs) s.mounts.push_back({input, false});
    for (const std::string& d : tool_folders(s.argv)) s.mounts.push_back({d, false});
    s.mounts.push_back({c.ws.obj(name).string(), false});
    s.mounts.push_back({c.ws.bin(name).string(), true});
    const RunResult r = run_sandboxed(s);
    if (!r.ok()) {
      blame_the_grader_if_its_file(r.output, c, "linking the lab's " + target + " program");
      step.status = LabStatus::link_error;
      step.output = lab.edit() +
                    " compiles but does not link (a function of the interface missing, or its "
                    "signature changed?):\n" +
                    first_errors(student_paths(r.output, c.ws, c.cache));
      return step;
    }
  }
  step.ok = true;
  return step;
}

}  // namespace workbook::grade
