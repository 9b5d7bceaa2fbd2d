// Grading one submission. Everything the student wrote runs in the sandbox (compile, link, tests,
// kernels); results come back only through channels the grader reads itself: the test channel
// (nonce-tagged records), the sealed checker (no student code in it), and the perf driver's clock.
#include <grade/grade.hpp>

#include <grade/gpu_access.hpp>
#include <grade/report.hpp>
#include <grade/sandbox.hpp>

#include <workbook/ceilings.hpp>
#include <workbook/internal/perf_verdict.hpp>
#include <workbook/perf_driver.hpp>
#include <workbook/report.hpp>
#include <workbook/roofline.hpp>
#include <workbook/seed.hpp>
#include <workbook/skip.hpp>
#include <workbook/stats.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include <cxxabi.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace workbook::grade {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string fixed(double v, int digits = 2) { return workbook::format_fixed(v, digits); }

// --- The workspace ----------------------------------------------------------------------------------

// W/src    the student's whitelisted files (readable by the sandbox)
// W/obj    compiled objects, W/bin linked executables (written by the sandbox user)
// W/tmp    working folder of every sandboxed run
// W/jail   mount point of the jail
// W/private  the grader's: channels, specs, perf records (root only)
struct Workspace {
  fs::path root;
  uid_t uid = 0;
  bool keep = false;

  fs::path src() const { return root / "src"; }
  fs::path obj(const std::string& lab) const { return root / "obj" / lab; }
  fs::path bin(const std::string& lab) const { return root / "bin" / lab; }
  fs::path tmp() const { return root / "tmp"; }
  fs::path jail() const { return root / "jail"; }
  fs::path priv() const { return root / "private"; }

  Workspace(const fs::path& work, int slot, bool keep_it) : keep(keep_it) {
    fs::create_directories(work);
    if (geteuid() == 0) fs::permissions(work, fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
    // A name nobody can guess: the work folder is traversable, not listable.
    root = work / ("grade-" + random_hex(8));
    fs::create_directories(root);
    fs::permissions(root, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    uid = sandbox_uid_base() + static_cast<uid_t>(slot);
    for (const fs::path& d : {src(), root / "obj", root / "bin", tmp(), jail(), priv()}) fs::create_directories(d);
    fs::permissions(priv(), fs::perms::owner_all);
    fs::permissions(src(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    for (const fs::path& d : {root / "obj", root / "bin", tmp()}) give(d);
  }
  ~Workspace() {
    if (keep) return;
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  // A folder the sandbox user writes.
  void give(const fs::path& d) const {
    fs::create_directories(d);
    if (geteuid() == 0) {
      if (chown(d.c_str(), uid, static_cast<gid_t>(uid)) != 0) throw std::runtime_error("chown " + d.string() + ": " + std::strerror(errno));
      fs::permissions(d, fs::perms::owner_all);
    } else {
      fs::permissions(d, fs::perms::owner_all);
    }
  }
};

// Paths as the student sees them: "labs/01_x/vector_ops.cpp", not the workspace's or the cache's.
std::string student_paths(std::string text, const Workspace& w, const Cache& cache) {
  text = replace_all(text, w.src().string() + "/", "");
  text = replace_all(text, cache.src().string() + "/", "");
  text = replace_all(text, w.root.string() + "/", "");
  return text;
}

std::string cut(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  return text.substr(0, max) + "\n[... " + std::to_string(text.size() - max) + " more characters]";
}

std::string fenced(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return "```\n" + replace_all(t, "```", "'''") + "\n```\n";
}

// --- The sandbox specs of each step -----------------------------------------------------------------

struct Context {
  const GradeOptions& options;
  const Cache& cache;
  Workspace& ws;
  std::ostream& log;
  std::uint64_t seed;
  bool parallel_ok = true;
};

SandboxSpec base_spec(const Context& c, const Rubric& rubric, double wall) {
  SandboxSpec s;
  s.env = clean_environment({"WORKBOOK_SEED=" + std::to_string(c.seed)});
  s.cwd = c.ws.tmp().string();
  s.jail_dir = c.ws.jail().string();
  s.slot = c.options.slot;
  s.limits.wall_seconds = wall;
  s.limits.cpu_seconds = wall;
  s.limits.memory_bytes = rubric.memory_bytes;
  s.limits.processes = rubric.processes;
  s.limits.file_bytes = rubric.file_bytes;
  s.limits.output_keep_bytes = rubric.output_keep_bytes;
  s.mounts.push_back({c.ws.tmp().string(), true});
  return s;
}

// --- Intake: the whitelisted files of a submission ---------------------------------------------------

bool is_archive(const fs::path& p) {
  const std::string n = p.filename().string();
  for (const char* ext : {".zip", ".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2"})
    if (n.size() > std::strlen(ext) && n.compare(n.size() - std::strlen(ext), std::strlen(ext), ext) == 0) return true;
  return false;
}

// Unpacks an archive in the sandbox (as the sandbox user: an archive is untrusted input too).
fs::path unpack(const Context& c, const fs::path& archive) {
  const fs::path into = c.ws.root / "intake";
  c.ws.give(into);
  const std::string name = archive.filename().string();
  const fs::path copy = c.ws.tmp() / ("submission-" + name);
  fs::copy_file(archive, copy, fs::copy_options::overwrite_existing);
  if (geteuid() == 0 && chown(copy.c_str(), c.ws.uid, static_cast<gid_t>(c.ws.uid)) != 0) {
  }
  SandboxSpec s = base_spec(c, Rubric::default_for("00"), 120);
  s.limits.file_bytes = 256ull << 20;
  s.limits.output_keep_bytes = 8 << 10;
  s.mounts.push_back({into.string(), true});
  if (name.size() > 4 && name.substr(name.size() - 4) == ".zip") {
    s.argv = {"/usr/bin/unzip", "-q", "-o", copy.string(), "-d", into.string()};
  } else {
    s.argv = {"/bin/tar", "-x", "--no-same-owner", "--no-same-permissions", "-f", copy.string(), "-C", into.string()};
  }
  const RunResult r = run_sandboxed(s);
  if (!r.ok()) throw std::invalid_argument("the submission " + name + " could not be unpacked: " + r.describe() + "\n" + r.output);
  return into;
}

// Finds `relative` (labs/<folder>/<file>) in a submission: at that path under the root or under one
// of its folders, else (a flat upload) a file with the same name when that name is unambiguous.
std::optional<fs::path> locate(const fs::path& root, const std::string& relative, bool name_unique) {
  std::vector<fs::path> exact, by_name;
  const std::string name = fs::path(relative).filename().string();
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it.depth() > 8) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string rel = fs::relative(it->path(), root).generic_string();
    if (it->is_directory() && (rel.find("/build") != std::string::npos || rel.rfind("build", 0) == 0 ||
                               it->path().filename() == ".git")) {
      it.disable_recursion_pending();
      continue;
    }
    if (rel == relative || (rel.size() > relative.size() && rel.compare(rel.size() - relative.size() - 1, std::string::npos, "/" + relative) == 0))
      exact.push_back(it->path());
    else if (it->path().filename() == name)
      by_name.push_back(it->path());
  }
  auto shortest = [](std::vector<fs::path>& v) {
    std::sort(v.begin(), v.end(), [](const fs::path& a, const fs::path& b) { return a.string().size() < b.string().size(); });
    return v.front();
  };
  if (!exact.empty()) return shortest(exact);
  if (name_unique && by_name.size() == 1) return by_name.front();
  return std::nullopt;
}

// Reads a submitted file safely: a regular file (never a link to something of the grader's), not
// larger than allowed.
std::string read_submitted(const fs::path& p, std::size_t max_bytes) {
  const int fd = open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw std::invalid_argument(errno == ELOOP ? "is a symbolic link (only regular files are taken)" : std::strerror(errno));
  struct stat s;
  if (fstat(fd, &s) != 0 || !S_ISREG(s.st_mode)) {
    close(fd);
    throw std::invalid_argument("is not a regular file");
  }
  if (static_cast<std::size_t>(s.st_size) > max_bytes) {
    close(fd);
    throw std::invalid_argument("is " + std::to_string(s.st_size >> 10) + " KiB, more than the " + std::to_string(max_bytes >> 10) + " KiB allowed");
  }
  std::string data(static_cast<std::size_t>(s.st_size), '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = read(fd, data.data() + got, data.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fd);
  data.resize(got);
  return data;
}

// --- Results of one lab -----------------------------------------------------------------------------

Item make_item(const LabRecipe& lab, const Rubric& rubric, Source source, const std::string& test) {
  Item item;
  item.lab = lab.number;
  item.source = source;
  item.test = test;
  const Rule* rule = rubric.find(source, test);
  item.function = Rubric::function_of(rule, source, test);
  item.max_score = rule ? rule->points : 0;
  item.visibility = rule ? rule->visibility : rubric.visibility;
  item.gate = rule && rule->gate;
  item.forfeit = rule && rule->forfeit;
  item.status = "not_run";
  if (!rule) item.details["rubric"] = "no rule: 0 of 0";
  return item;
}

std::vector<Item> all_items(const LabRecipe& lab, const Rubric& rubric) {
  std::vector<Item> items;
  for (const std::string& t : lab.visible_tests) items.push_back(make_item(lab, rubric, Source::visible, t));
  for (const std::string& t : lab.hidden_tests) items.push_back(make_item(lab, rubric, Source::hidden, t));
  for (const std::string& t : lab.perf_cases) items.push_back(make_item(lab, rubric, Source::perf, t));
  return items;
}

void fail_all(std::vector<Item>& items, const std::string& why) {
  for (Item& i : items) {
    if (i.status != "not_run") continue;
    i.status = "failed";
    i.score = 0;
    i.output = why;
  }
}

// --- Compile, audit, link -----------------------------------------------------------------------------

std::string demangle(const std::string& name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && text ? text : name;
  std::free(text);
  return out;
}

// A submission may define only its lab's functions: no symbol the harness, the tests or GoogleTest
// define (a redefinition would replace them in the test executable), and nothing outside the lab's
// namespace except compiler-made template and inline copies. Returns the problems found.
std::vector<std::string> audit_symbols(const std::vector<std::string>& nm_lines, const LabRecipe& lab, const Rubric& rubric) {
  std::map<std::string, char> trusted;
  {
    std::istringstream in(read_text(lab.symbols));
    for (std::string line; std::getline(in, line);)
      if (line.size() > 2) trusted[line.substr(2)] = line[0];
  }
  std::vector<std::regex> allowed;
  for (const std::string& r : rubric.allowed_symbols) allowed.emplace_back(r);
  const std::string lab_namespace = "lab" + lab.number + "::";
  std::vector<std::string> problems;
  for (const auto& [name, kind] : defined_symbols(nm_lines)) {
    if (std::any_of(allowed.begin(), allowed.end(), [&](const std::regex& r) { return std::regex_search(name, r); })) continue;
    // Vague linkage (weak, or GNU unique: the static locals of inline functions) is how the compiler
    // emits a copy of an inline function or template in every object file that uses it; the linker
    // keeps one. Such a copy of a symbol the harness also has as vague is the same code, not a
    // replacement; so are the DWARF references to a type's typeinfo that exception handling needs.
    const auto vague = [](char k) { return k == 'W' || k == 'V' || k == 'u'; };
    const bool weak = vague(kind);
    if (weak && name.rfind("DW.ref.", 0) == 0) continue;
    const std::string readable = demangle(name);
    const auto t = trusted.find(name);
    if (t != trusted.end() && (!weak || !vague(t->second))) {
      problems.push_back("`" + readable + "` is already defined by the harness or the tests: your definition would replace theirs");
      continue;
    }
    if (name.rfind("_Z", 0) != 0) {
      problems.push_back("`" + readable + "` is a global C symbol: it could replace a function of the C library "
                         "for the whole test program. Make it static, or put it in an anonymous namespace");
      continue;
    }
    // nvcc gives each kernel a host-side launch stub, "__device_stub__" + the kernel's mangled name,
    // outside every namespace: it is judged by the kernel's own name.
    const std::string stub = "__device_stub__";
    const std::string judged = readable.rfind(stub, 0) == 0
                                   ? demangle("_" + readable.substr(stub.size(), readable.find('(') - stub.size()))
                                   : readable;
    if (!weak && judged.rfind(lab_namespace, 0) != 0 && judged.rfind("typeinfo for " + lab_namespace, 0) != 0 &&
        judged.rfind("vtable for " + lab_namespace, 0) != 0 && judged.rfind("typeinfo name for " + lab_namespace, 0) != 0) {
      problems.push_back("`" + judged + "` is defined outside namespace " + lab_namespace.substr(0, lab_namespace.size() - 2) +
                         ": define your helpers (kernels too) in an anonymous namespace inside it, or as static functions");
    }
  }
  return problems;
}

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
      if (installation) p = p.parent_path().filename() == "bin" ? p.parent_path().parent_path() : p.parent_path();
      if (!under_system_folder(p.string()) && std::find(folders.begin(), folders.end(), p.string()) == folders.end())
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

struct BuildStep {
  bool ok = false;
  std::string status;  // compile_error, symbol_error, link_error
  std::string output;
};

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
    for (const std::string& a : compile.argv) s.argv.push_back(a == "@SRC@" ? source.string() : a == "@OBJ@" ? object.string() : a);
    s.argv.insert(s.argv.end() - 4, "-fdiagnostics-color=never");
    for (const std::string& d : compile.include_dirs) s.mounts.push_back({d, false});
    for (const std::string& d : tool_folders(s.argv)) s.mounts.push_back({d, false});
    s.mounts.push_back({c.ws.src().string(), false});
    s.mounts.push_back({c.ws.obj(name).string(), true});
    const RunResult r = run_sandboxed(s);
    if (!r.ok()) {
      step.status = "compile_error";
      std::string text = r.exited ? first_errors(student_paths(r.output, c.ws, c.cache)) : r.describe() + "\n" + student_paths(r.output, c.ws, c.cache);
      step.output = "labs/" + lab.folder + "/" + compile.source + " does not compile:\n" + text;
      return step;
    }
    objects.push_back(object.string());
  }
  // The symbol audit.
  {
    SandboxSpec s = base_spec(c, rubric, 60);
    s.limits.output_keep_bytes = 4 << 20;
    s.argv = {"/usr/bin/nm", "-P", "-g", "--defined-only"};
    s.argv.insert(s.argv.end(), objects.begin(), objects.end());
    s.mounts.push_back({c.ws.obj(name).string(), false});
    const RunResult r = run_sandboxed(s);
    std::vector<std::string> lines;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    const std::vector<std::string> problems = r.ok() ? audit_symbols(lines, lab, rubric)
                                                     : std::vector<std::string>{"its symbols could not be read: " + r.describe()};
    if (!problems.empty()) {
      step.status = "symbol_error";
      step.output = lab.edit() + " defines symbols a submission may not define:\n";
      for (std::size_t i = 0; i < problems.size() && i < 10; ++i) step.output += "  - " + problems[i] + "\n";
      return step;
    }
  }
  for (const auto& [target, link] : lab.links) {
    SandboxSpec s = base_spec(c, rubric, 180);
    s.limits.memory_bytes = std::max<std::uint64_t>(rubric.memory_bytes, 4ull << 30);
    s.limits.file_bytes = std::max<std::uint64_t>(rubric.file_bytes, 512ull << 20);
    s.limits.output_keep_bytes = 256 << 10;
    for (const std::string& a : link.argv) {
      if (a == "@IMPL@") s.argv.insert(s.argv.end(), objects.begin(), objects.end());
      else if (a == "@OUT@") s.argv.push_back((c.ws.bin(name) / target).string());
      else s.argv.push_back(a);
    }
    for (const std::string& input : link.inputs) s.mounts.push_back({input, false});
    for (const std::string& d : tool_folders(s.argv)) s.mounts.push_back({d, false});
    s.mounts.push_back({c.ws.obj(name).string(), false});
    s.mounts.push_back({c.ws.bin(name).string(), true});
    const RunResult r = run_sandboxed(s);
    if (!r.ok()) {
      step.status = "link_error";
      step.output = lab.edit() + " compiles but does not link (a function of the interface missing, or its "
                                 "signature changed?):\n" +
                    first_errors(student_paths(r.output, c.ws, c.cache));
      return step;
    }
  }
  step.ok = true;
  return step;
}

// --- Visible tests: one process per test, results on the private channel -----------------------------

struct TestRun {
  std::string test;
  std::unique_ptr<SandboxProcess> process;
  int channel = -1;
  std::string nonce, data;
  Clock::time_point start;
};

void read_channel(TestRun& t, bool until_eof) {
  char buffer[65536];
  for (;;) {
    if (!until_eof) {
      pollfd p{t.channel, POLLIN, 0};
      if (poll(&p, 1, 0) <= 0) return;
    }
    const ssize_t n = read(t.channel, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (t.data.size() < (4u << 20)) t.data.append(buffer, static_cast<std::size_t>(n));
  }
}

void judge_visible(Item& item, const TestRun& t, const RunResult& r, const Context& c, const LabRecipe& lab,
                   const Rubric& rubric) {
  bool started = false, ended = false, forged = false;
  std::string result, failures, skip;
  std::istringstream in(t.data);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, t.nonce.size() + 1, t.nonce + " ") != 0) {
      forged = true;
      continue;
    }
    json e;
    try {
      e = json::parse(line.substr(t.nonce.size() + 1));
    } catch (const json::exception&) {
      forged = true;
      continue;
    }
    const std::string event = e.value("event", "");
    if (event == "start" && e.value("test", "") == t.test) started = true;
    if (event == "failure") failures += e.value("message", "") + "\n";
    if (event == "skip") skip += e.value("message", "");
    if (event == "end" && e.value("test", "") == t.test) {
      ended = true;
      result = e.value("result", "");
    }
  }
  item.seconds = r.wall_seconds;
  const std::string output = r.output.empty() ? "" : "\nThe test printed:\n" + fenced(cut(student_paths(r.output_with_note(), c.ws, c.cache), 3000));
  const std::string replay = "\n(Inputs from WORKBOOK_SEED=" + std::to_string(c.seed) + "; replay with `WORKBOOK_SEED=" +
                             std::to_string(c.seed) + " ctest --preset lab" + lab.number + " -R '" + t.test + "'`.)";
  item.status = "failed";
  if (forged) {
    item.output = "Not credited: the test process wrote records to the grader's channel that the grader did not "
                  "expect (a forged result?). The grader reads results from this channel only; printing or writing "
                  "\"passed\" anywhere earns nothing.";
    item.details["forged"] = true;
  } else if (ended && result == "passed" && r.ok()) {
    item.status = "passed";
  } else if (ended && result == "passed") {
    item.output = "The test's checks passed, but then the test process " + r.describe() +
                  ": a crash at exit (a static object of yours?) fails the test." + output;
  } else if (ended && result == "skipped" &&
             std::any_of(rubric.skip_reasons.begin(), rubric.skip_reasons.end(),
                         [&](const std::string& why) { return skip.find(why) != std::string::npos; })) {
    item.status = "skipped";
    item.output = "Not graded: the test skipped itself on this machine: " + student_paths(skip, c.ws, c.cache);
  } else if (ended && result == "skipped") {
    item.output = "The test skipped itself for a reason the lab does not allow (" + cut(skip, 300) +
                  "): a skip is not a pass. Edit " + lab.edit() + "." + output;
  } else if (ended) {
    // The test's own failure messages (GoogleTest prints them again on stdout: not repeated).
    item.output = fenced(cut(student_paths(failures, c.ws, c.cache), 6000)) + "Edit " + lab.edit() + "." + replay;
  } else if (started) {
    const std::string how = r.timed_out || r.output_flood || !r.exited ? r.describe()
                                                                       : "its process exited (code " + std::to_string(r.code) + ") in the middle of it";
    item.output = "The test did not finish: " + how + ".\n" +
                  (failures.empty() ? "" : fenced(cut(student_paths(failures, c.ws, c.cache), 3000))) + "Edit " + lab.edit() + "." + replay + output;
  } else {
    item.output = "The test process ended before the test began (" + r.describe() +
                  "): code of yours that runs at start-up, or a crash while loading? Edit " + lab.edit() + "." + output;
  }
}

void run_visible(Context& c, const LabRecipe& lab, const Rubric& rubric, std::vector<Item>& items, Clock::time_point lab_start) {
  const double timeout = c.options.test_timeout.value_or(rubric.test_timeout_seconds);
  // A GPU lab's tests one at a time: they time kernels of known length, and share the GPU's memory.
  const int jobs = c.parallel_ok && !lab.gpu ? std::max(1, c.options.jobs) : 1;
  const fs::path exe = c.ws.bin(lab.name()) / "tests";
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].source == Source::visible) todo.push_back(i);
  std::vector<std::pair<std::size_t, TestRun>> running;
  std::size_t next = 0;
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && static_cast<int>(running.size()) < jobs) {
      Item& item = items[todo[next]];
      ++next;
      if (since(lab_start) > rubric.lab_seconds) {
        item.status = "failed";
        item.output = "Not run: the lab's time budget (" + fixed(rubric.lab_seconds, 0) + " s) ran out.";
        continue;
      }
      TestRun t;
      t.test = item.test;
      t.nonce = random_hex(16);
      int channel[2], nonce[2];
      if (pipe2(channel, O_CLOEXEC) != 0 || pipe2(nonce, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
      const std::string line = t.nonce + "\n";
      if (write(nonce[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) throw std::runtime_error("nonce write failed");
      close(nonce[1]);
      SandboxSpec s = base_spec(c, rubric, timeout);
      s.gpu = lab.gpu;
      s.argv = {exe.string(), "--gtest_filter=" + item.test, "--gtest_color=no"};
      s.mounts.push_back({c.ws.bin(lab.name()).string(), false});
      s.mounts.push_back({lab.lab_dir.string(), false});
      s.pass_fds = {channel[1], nonce[0]};
      t.channel = channel[0];
      t.start = Clock::now();
      t.process = std::make_unique<SandboxProcess>(s);
      running.emplace_back(todo[next - 1], std::move(t));
    }
    if (running.empty()) continue;
    // Drain the channels while the tests run (a full pipe would block a test), then collect ends.
    std::vector<pollfd> fds;
    for (auto& [index, t] : running) fds.push_back({t.channel, POLLIN, 0});
    poll(fds.data(), fds.size(), 20);
    for (auto it = running.begin(); it != running.end();) {
      TestRun& t = it->second;
      read_channel(t, false);
      // The supervisor ends right after the test process: a non-blocking wait tells.
      int status = 0;
      const pid_t done = waitpid(t.process->supervisor(), &status, WNOHANG);
      if (done == 0) {
        ++it;
        continue;
      }
      const RunResult r = t.process->finish(5);
      read_channel(t, true);
      close(t.channel);
      judge_visible(items[it->first], t, r, c, lab, rubric);
      c.log << "    " << items[it->first].name() << ": " << items[it->first].status << "\n";
      it = running.erase(it);
    }
  }
}

// --- Hidden tests: the sealed checker (trusted) calls the student's worker in the sandbox --------------

void run_hidden(Context& c, const LabRecipe& lab, const Rubric& rubric, std::vector<Item>& items, Clock::time_point lab_start) {
  if (lab.checker.empty() || lab.hidden_tests.empty()) return;
  const double timeout = c.options.test_timeout.value_or(rubric.test_timeout_seconds);
  SandboxSpec worker = base_spec(c, rubric, 3600);
  worker.gpu = lab.gpu;
  worker.mounts.push_back({c.ws.bin(lab.name()).string(), false});
  worker.mounts.push_back({lab.lab_dir.string(), false});
  const fs::path spec_file = c.ws.priv() / (lab.name() + "-sealed-sandbox.json");
  write_json(spec_file, spec_to_json(worker));
  const fs::path report = c.ws.priv() / (lab.name() + "-hidden.json");
  SandboxSpec checker;
  checker.isolate = false;
  for (char** e = environ; *e; ++e) checker.env.push_back(*e);
  checker.env.push_back("WORKBOOK_SEALED_WORKER=" + (c.ws.bin(lab.name()) / "sealed_worker").string());
  checker.env.push_back("WORKBOOK_SEALED_SANDBOX=" + spec_file.string());
  checker.env.push_back("WORKBOOK_SEALED_TIMEOUT=" + fixed(timeout, 1));
  checker.env.push_back("WORKBOOK_SEED=" + std::to_string(c.seed));
  checker.argv = {lab.checker, "--gtest_output=json:" + report.string(), "--gtest_color=no"};
  checker.cwd = c.ws.priv().string();
  const double left = std::max(10.0, rubric.lab_seconds - since(lab_start));
  checker.limits.wall_seconds = left;
  checker.limits.cpu_seconds = left;
  checker.limits.memory_bytes = 16ull << 30;
  checker.limits.file_bytes = 1ull << 40;  // its shared memory (a memfd) counts as a file
  checker.limits.open_files = 1024;
  checker.limits.output_keep_bytes = 1 << 20;
  const RunResult r = run_sandboxed(checker);
  std::map<std::string, std::pair<std::string, std::string>> results;  // test -> (result, failures)
  if (fs::exists(report)) {
    try {
      const json j = read_json(report);
      for (const json& suite : items_of(j, "testsuites")) {
        for (const json& t : items_of(suite, "testsuite")) {
          std::string failures;
          for (const json& f : items_of(t, "failures")) failures += f.value("failure", "") + "\n";
          const std::string name = suite.value("name", "") + "." + t.value("name", "");
          const std::string result = t.value("result", "") == "SKIPPED" ? "skipped" : failures.empty() ? "passed" : "failed";
          results[name] = {result, failures};
        }
      }
    } catch (const std::exception&) {
    }
  }
  // A GPU lab's checker on a machine without a GPU skips every test, as the lab's own tests do.
  const bool no_gpu = results.empty() && r.exited && r.code == workbook::kSkipReturnCode;
  for (Item& item : items) {
    if (item.source != Source::hidden) continue;
    const auto found = results.find(item.test);
    if (no_gpu) {
      item.status = "skipped";
      item.output = "Not graded: the hidden test skipped itself on this machine: " + cut(r.output, 300);
      continue;
    }
    if (found == results.end()) {
      // Fail closed: whatever stopped the checker, its tests did not pass (they gate other points).
      item.status = "failed";
      item.output = "Not run: the hidden-test checker stopped early (" + r.describe() + "). If your code is not the "
                    "cause, tell your instructor: the grading is flagged for review.";
      item.details["grader_error"] = true;
      continue;
    }
    item.status = found->second.first;
    if (item.status == "failed") {
      // The checker's own file paths mean nothing to a student; the message says what to fix.
      std::string text = student_paths(found->second.second, c.ws, c.cache);
      text = std::regex_replace(text, std::regex(R"((^|\n)[^\n]*autograder/labs/[^\n]*:\d+\n)"), "$1");
      item.output = fenced(cut(text, 5000)) + "Edit " + lab.edit() + ".\n(Hidden test; inputs from WORKBOOK_SEED=" +
                    std::to_string(c.seed) + ".)";
    } else if (item.status == "skipped") {
      item.output = "Not graded: skipped on this machine.";
    }
    c.log << "    " << item.name() << ": " << item.status << "\n";
  }
}

// --- Perf: the harness's driver, with the student's worker in the sandbox -----------------------------

// The name a verdict's reason has in the record and the instructor's notes ("too_slow").
std::string reason_name(perf::Reason reason) { return json(reason).get<std::string>(); }

// The reference's sandbox user is the job's plus this: a user of its own.
constexpr int kReferenceSlotOffset = 1000;

// The two ratios of a perf verdict: the one the harness judged by (interleaved rounds, from the
// times each worker reported) and the one of the driver's own clock (timed batches, round trips).
struct PerfRatios {
  bool valid = false;
  bool reference_ok = false;
  double claimed = 0, clock = 0;
  double claimed_seconds = 0, clock_seconds = 0;
  // Within 1.3x: noise of a shared machine. Beyond: a worker that reports faster than it runs.
  bool agree() const { return clock <= 1.3 * claimed; }
};

PerfRatios perf_ratios(const perf::Verdict& v) {
  PerfRatios r;
  if (!v.student || !v.reference || !v.ratio || !v.clock) return r;
  const double mine = v.clock->yours;
  const double claimed = v.student->timing.median;
  const double theirs = v.clock->reference;  // expected from the profile when there is no reference worker
  r.claimed = v.ratio->median;
  r.reference_ok = theirs > 0 && std::isfinite(theirs);
  if (!(r.reference_ok && mine > 0 && claimed > 0 && r.claimed > 0 && std::isfinite(claimed) && std::isfinite(r.claimed))) return r;
  r.clock = v.clock->ratio;
  r.claimed_seconds = claimed;
  r.clock_seconds = mine;
  r.valid = true;
  return r;
}

void run_perf(Context& c, const LabRecipe& lab, const Rubric& rubric, std::vector<Item>& items, LabResult& result,
              const std::set<std::string>& gated_off, Clock::time_point lab_start) {
  const std::string name = lab.name();
  const fs::path results = c.ws.priv() / "perf";
  for (Item& item : items) {
    if (item.source != Source::perf) continue;
    const Rule* rule = rubric.find(Source::perf, item.test);
    PerfScale scale = rule && rule->perf ? *rule->perf : rubric.perf;
    if (c.options.perf_full_within) scale.full_within = *c.options.perf_full_within;
    if (c.options.perf_zero_at) scale.zero_at = *c.options.perf_zero_at;
    if (c.options.perf_seconds) scale.max_seconds = *c.options.perf_seconds;
    if (item.status == "skipped") continue;  // not timed at all (no perf)
    if (gated_off.count(item.function)) {
      item.status = "failed";
      item.output = "Not timed: " + item.function + " is not implemented yet, or its hidden tests fail (see them above); "
                    "a kernel is timed only once it is right.";
      continue;
    }
    if (since(lab_start) > rubric.lab_seconds) {
      item.status = "failed";
      item.output = "Not timed: the lab's time budget (" + fixed(rubric.lab_seconds, 0) + " s) ran out.";
      continue;
    }
    // Both workers run through the same launcher, in the same kind of sandbox, so that neither
    // gets conditions the other lacks; the reference as a user of its own (it cannot be signalled
    // or traced from the student's), its binary executable but not readable.
    auto launcher_for = [&](const std::string& who, const fs::path& worker, int slot, const fs::path& mount) {
      SandboxSpec s = base_spec(c, rubric, std::max(600.0, 20 * scale.max_seconds + 3 * rubric.test_timeout_seconds));
      s.slot = slot;
      s.gpu = lab.gpu;
      s.argv = {worker.string()};
      s.mounts.push_back({mount.string(), false});
      s.mounts.push_back({lab.lab_dir.string(), false});
      json spec = spec_to_json(s);
      const std::string stem = name + "-perf-" + item.test + "-" + who;
      spec["log"] = (c.ws.priv() / (stem + ".log")).string();
      // The driver's channel (3, 4) and the shared memory into which the worker copies the output
      // of the timed call the driver checks (5).
      spec["pass_fds"] = {3, 4, 5};
      write_json(c.ws.priv() / (stem + ".json"), spec);
      const fs::path launcher = c.ws.priv() / (stem + ".sh");
      write_text_atomic(launcher, "#!/bin/sh\nexec " + shell_quote(self_executable().string()) + " sandbox-exec " +
                                      shell_quote((c.ws.priv() / (stem + ".json")).string()) + " \"$@\"\n");
      fs::permissions(launcher, fs::perms::owner_all);
      return launcher.string();
    };

    perf::DriverOptions o;
    o.lab = name;
    o.case_name = item.test;
    o.student = launcher_for("student", c.ws.bin(name) / "perf", c.options.slot, c.ws.bin(name));
    if (!lab.perf_reference.empty())
      o.reference = launcher_for("reference", lab.perf_reference, c.options.slot + kReferenceSlotOffset, lab.perf_reference);
    else
      o.profile = lab.profile;
    o.ceilings_path = c.cache.ceilings.string();
    o.results = results;
    o.edit = lab.edit();
    o.max_ratio = scale.full_within;
    o.seed = seed_for(name + "." + item.test);
    o.timing.max_seconds = scale.max_seconds;
    o.timeout_seconds = c.options.test_timeout.value_or(rubric.test_timeout_seconds) * 3;
    std::ostringstream text;
    const auto start = Clock::now();
    std::optional<perf::Verdict> verdict;
    PerfRatios ratios;
    for (int attempt = 1; attempt <= 2; ++attempt) {
      std::ostringstream attempt_text;
      std::optional<perf::Verdict> this_verdict;
      {
        std::unique_ptr<PhaseLock> alone;
        if (c.options.perf_lock) alone = std::make_unique<PhaseLock>(c.cache.root, true);
        try {
          this_verdict = perf::drive(o, attempt_text);  // the verdict, a value (its record is written too)
        } catch (const std::exception& e) {
          attempt_text << "ERROR: " << e.what() << "\n";
        }
      }
      if (!this_verdict) {
        if (!verdict) text.str(attempt_text.str());
        break;
      }
      const PerfRatios these = perf_ratios(*this_verdict);
      if (attempt == 1 || (these.valid && (!ratios.valid || these.clock < ratios.clock))) {
        verdict = std::move(this_verdict);
        ratios = these;
        text.str(attempt_text.str());
      }
      // Measure again only when the grader's clock disagrees with what the worker reported.
      if (!ratios.valid || ratios.agree()) break;
      c.log << "    " << item.name() << ": the grader's clock says " << fixed(ratios.clock) << "x, the worker "
            << fixed(ratios.claimed) << "x: measuring again\n";
    }
    item.seconds = since(start);
    if (!verdict) {
      item.status = "skipped";
      item.details["grader"] = true;
      item.output = "Not graded: the perf driver failed (a problem of the grader, not of your code):\n" + fenced(cut(text.str(), 2000));
      result.notes.push_back("perf " + item.test + ": driver error");
      continue;
    }
    const perf::Verdict& v = *verdict;
    const std::string reason = reason_name(v.reason);
    if (const std::string svg = perf::roofline_plot(v); !svg.empty()) result.plots.emplace_back(item.test, svg);
    item.details["verdict"] = v.outcome;
    item.details["reason"] = reason;
    if (v.outcome == perf::Outcome::error && v.reason == perf::Reason::mismatch) {
      // The student's worker describes the work itself: a mismatch is its doing. Fail closed.
      item.status = "failed";
      item.output = "Not graded: your perf worker described different work than the reference's (" + v.message + ").";
      item.details["grader_error"] = true;
      continue;
    }
    if (v.outcome == perf::Outcome::error) {
      item.status = "skipped";
      item.details["grader"] = true;
      item.output = "Not graded: " + v.message + " (a problem of the grader, not of your code).";
      result.notes.push_back("perf " + item.test + ": " + reason);
      continue;
    }
    if (v.outcome == perf::Outcome::fail &&
        (v.reason == perf::Reason::timed_output_differs || v.reason == perf::Reason::output_tampered)) {
      // The driver's own check of a timed call: the output differs from the reference's on the same
      // inputs, though the check in the student's process passed. No points, and flagged.
      item.status = "failed";
      item.output = "**Not credited:** " + v.message +
                    " If you believe your kernel is right, ask your instructor to look at it.\n\nEdit " + lab.edit() + ".";
      item.details["flag"] = "timed output differs from the reference's";
      item.details["timed_output_differs"] = true;
      result.notes.push_back("perf " + item.test + ": the output of a timed call differs from the reference's (flagged)");
      c.log << "    " << item.name() << ": the output of a timed call differs from the reference's\n";
      continue;
    }
    if (v.outcome == perf::Outcome::fail && v.reason != perf::Reason::too_slow) {
      item.status = "failed";
      item.output = fenced(cut(student_paths(v.message, c.ws, c.cache), 4000)) + "Edit " + lab.edit() + ".";
      continue;
    }
    if (!ratios.valid) {
      // No usable reference time is the grader's problem; no usable time of the student's is not.
      const bool theirs_missing = !ratios.reference_ok;
      item.status = theirs_missing ? "skipped" : "failed";
      if (theirs_missing) item.details["grader"] = true;
      item.output = theirs_missing ? "Not graded: the reference's timing did not come back (a problem of the grader)."
                                   : "Not credited: your perf worker reported no usable times.";
      continue;
    }
    // The harness's ratio (interleaved rounds, medians: robust to a loaded machine) when the
    // grader's own clock agrees with the times the worker reported; else the grader's clock, which
    // code in the worker cannot forge, and a flag.
    const bool agree = ratios.agree();
    const double ratio = agree ? ratios.claimed : ratios.clock;
    const double mine = agree ? ratios.claimed_seconds : ratios.clock_seconds;
    const double theirs = mine / ratio;
    // The driver placed both times on the roofline: the worker's (the student's analysis) and its own clock's.
    const workbook::Analysis& a = agree ? v.student->analysis : *v.clock->analysis;
    const bool implausible = ratio < scale.implausible_ratio && a.fraction_of_roof > scale.implausible_roof;
    item.score = implausible ? 0 : item.max_score * scale.fraction(ratio);
    item.status = item.score >= item.max_score - 1e-9 ? "passed" : "failed";
    item.details.update({{"ratio", ratio},
                         {"worker_reported_ratio", ratios.claimed},
                         {"grader_clock_ratio", ratios.clock},
                         {"clocks_agree", agree},
                         {"seconds", mine},
                         {"reference_seconds", theirs},
                         {"fraction_of_roof", a.fraction_of_roof},
                         {"gops", a.gops},
                         {"gbs", a.gbs},
                         {"intensity", a.intensity},
                         {"ops_unit", v.work->ops_unit},
                         {"traffic", v.work->traffic},
                         {"full_within", scale.full_within},
                         {"zero_at", scale.zero_at},
                         {"implausible", implausible},
                         {"output_checked", v.output_check && v.output_check->checked}});
    std::string grading = std::string("**Graded**") + (agree ? "" : " by the grader's own clock") + ": your time is **" + fixed(ratio) + "x** the reference's" +
                          (v.reference->expected_from_profile ? " (expected from its recorded fraction of the roofline)" : "") +
                          ": " + fixed(item.score, 2) + " of " + fixed(item.max_score, 2) + " points (full within " +
                          fixed(scale.full_within) + "x, none from " + fixed(scale.zero_at) + "x).\n";
    if (!agree) {
      grading += "(The times your worker reported, " + fixed(ratios.claimed) + "x, disagree with the grader's clock, " +
                 fixed(ratios.clock) + "x, twice: graded by the grader's clock.)\n";
      item.details["flag"] = "clocks disagree";
    }
    if (implausible) {
      grading = "**Not credited:** your kernel took " + fixed(ratio) + "x the reference's time and reached " +
                workbook::format_percent(a.fraction_of_roof) + " of the roofline this machine allows. A kernel that fast "
                "skips work or reuses results between calls; the timing is not graded. If you believe it is genuine, "
                "ask your instructor to look at it.\n";
      item.details["flag"] = "implausibly fast";
    }
    item.output = grading + "\n" + perf::markdown(v, false);
    c.log << "    " << item.name() << ": " << fixed(ratio) << "x, " << fixed(item.score) << "/" << fixed(item.max_score) << "\n";
  }
}

// --- One lab ------------------------------------------------------------------------------------------

LabResult grade_lab(Context& c, const LabRecipe& lab, bool submitted, const std::string& missing) {
  const auto start = Clock::now();
  LabResult result;
  result.number = lab.number;
  result.folder = lab.folder;
  c.log << "  " << lab.name() << " (" << lab.folder << ")\n" << std::flush;
  if (!lab.available) {
    result.status = "unavailable";
    result.notes.push_back(lab.unavailable);
    Item build;
    build.lab = lab.number;
    build.test = "build";
    build.status = "skipped";
    build.output = "Not graded: this lab cannot be graded on this machine (" + first_errors(lab.unavailable, 5) + ").";
    result.items.push_back(build);
    return result;
  }
  const Rubric rubric = c.cache.rubric(lab);
  result.title = rubric.title;
  std::vector<Item> items = all_items(lab, rubric);
  if (!c.options.perf) {
    // Graded without perf: the perf cases leave the maximum for every submission alike.
    for (Item& i : items) {
      if (i.source != Source::perf) continue;
      i.status = "skipped";
      i.details["grader"] = true;
      i.output = "Not timed (the grader ran without perf).";
    }
  }
  Item build;
  build.lab = lab.number;
  build.test = "build";
  build.function = "";
  build.status = "passed";
  build.visibility = "visible";

  auto finish = [&] {
    for (Item& i : items) {
      // Excluded: skipped here (the rubric's policy), or not the student's doing (no perf run, a
      // grader error); those always leave the maximum.
      if (i.status == "skipped" && (rubric.skipped == SkipPolicy::exclude || i.details.value("grader", false))) {
        i.details["excluded"] = true;
        i.max_score = 0;
      } else if (i.status == "skipped") {
        i.status = "failed";
        i.output = "Counted as 0 (the rubric counts a test that cannot run here as zero). " + i.output;
      }
      if (i.status != "passed" && i.source != Source::perf) i.score = 0;
      if (i.status == "passed" && i.source != Source::perf) i.score = i.max_score;
    }
    items.insert(items.begin(), build);
    result.items = std::move(items);
    std::string skipped_because;
    for (const Item& i : result.items) {
      result.score += i.score;
      result.max_score += i.max_score;
      if (skipped_because.empty() && i.status == "skipped" && i.test != "build") skipped_because = i.output;
    }
    if (result.status == "graded" && result.max_score == 0) {
      // Nothing could be graded (a GPU lab on a machine without a GPU): never a 0 / 0 "success".
      result.status = "not_graded";
      result.notes.push_back("nothing of lab " + lab.number + " could be graded on this machine: " +
                             (skipped_because.empty() ? std::string("no test counts") : skipped_because));
    }
    result.seconds = since(start);
    return result;
  };

  if (!submitted) {
    result.status = "not_submitted";
    build.status = "failed";
    build.output = "Not submitted: " + missing;
    fail_all(items, "Not graded: " + missing);
    return finish();
  }
  BuildStep step;
  {
    PhaseLock shared(c.cache.root, false);
    step = build_lab(c, lab, rubric);
  }
  if (!step.ok) {
    result.status = step.status;
    result.build_output = step.output;
    build.status = "failed";
    build.output = fenced(step.output) + "\nEvery test of lab " + lab.number + " counts 0 until it builds.";
    fail_all(items, "Not run: lab " + lab.number + " does not build (see " + lab.name() + " build).");
    c.log << "    build: " << step.status << "\n";
    return finish();
  }
  build.output = "Built: " + lab.edit() + " compiled and linked with the lab's tests.";
  {
    PhaseLock shared(c.cache.root, false);
    run_visible(c, lab, rubric, items, start);
    run_hidden(c, lab, rubric, items, start);
  }
  // A function earns nothing from tests it passes by accident: when it is not implemented (some
  // of its tests fail with "not implemented": the stub's argument checks pass the others); and
  // its visible tests earn nothing when its gating hidden tests fail (they guard the tests that
  // run inside the student's process, whose results the student's code could forge).
  std::set<std::string> unimplemented, visible_failed, gated_off;
  std::map<std::string, std::string> forfeited;  // function -> the integrity check it failed
  std::set<std::string> hidden_failed;            // functions failing a gating hidden test that is not an integrity check
  for (const Item& i : items) {
    if (i.status != "failed") continue;
    if (i.output.find("not implemented yet: implement ") != std::string::npos) unimplemented.insert(i.function);
    if (i.source == Source::visible) visible_failed.insert(i.function);
    if (i.gate) gated_off.insert(i.function);
    if (i.forfeit && !forfeited.count(i.function)) forfeited[i.function] = i.test;
    if (i.source == Source::hidden && i.gate && !i.forfeit) hidden_failed.insert(i.function);
  }
  // For the instructor: every visible test of a function passed in the student's process, while
  // the same function fails its gating hidden tests or says "not implemented" only in the sealed
  // worker. That is what a forged channel or results faked inside the test look like (or a bug only
  // the hidden inputs reach); a function that is merely wrong fails some visible test too, and is
  // not flagged. The student's message stays neutral.
  const std::string suspect = "visible tests passed but the sealed tests of the same function failed (a forged "
                              "channel, or results faked in the test process)";
  auto flag_suspect = [&](Item& i) {
    if (i.source == Source::visible && !visible_failed.count(i.function)) i.details["flag"] = suspect;
  };
  for (Item& i : items) {
    if (i.status != "passed" || i.gate) continue;
    if (unimplemented.count(i.function)) {
      i.status = "failed";
      i.details["not_implemented"] = true;
      flag_suspect(i);
      i.output = "Passed, but not credited: " + i.function + " is not implemented yet (its other tests say so); "
                 "this test passes on the stub's argument checks alone.";
    } else if (gated_off.count(i.function) && i.source == Source::visible) {
      // Hidden tests are checked outside the student's process: each counts on its own merit.
      i.status = "failed";
      i.details["gated"] = true;
      flag_suspect(i);
      i.output = "Passed in your program, but not credited: hidden tests of " + i.function + " fail, and they guard "
                 "the points of the tests that run inside your program.";
    }
  }
  // A function that passes its other gating hidden tests (it computes the right thing) but keeps
  // results from one call to the next, or writes inputs it must leave alone, earns nothing (its
  // other hidden tests included): its right answers cannot be told from reused ones. (A function
  // that is simply wrong fails those tests too; it is gated as usual, not treated as this.)
  for (Item& i : items) {
    const auto f = forfeited.find(i.function);
    if (f == forfeited.end() || i.source == Source::perf || unimplemented.count(i.function) || hidden_failed.count(i.function))
      continue;
    if (i.source == Source::visible)  // the flags list reads them from the visible tests
      i.details["flag"] = "failed an integrity check (" + f->second + "): results kept between calls, or inputs modified";
    if (i.status != "passed") continue;
    i.status = "failed";
    i.details["forfeited"] = true;
    i.output = "Passed, but not credited: " + i.function + " failed the hidden test " + f->second +
               " (its results must be fresh at each call and its inputs left as they were); a function that fails it "
               "earns nothing, since its right answers cannot be told from reused ones.";
  }
  gated_off.insert(unimplemented.begin(), unimplemented.end());
  run_perf(c, lab, rubric, items, result, gated_off, start);
  return finish();
}

std::string trimmed_id(const fs::path& submission) {
  std::string name = submission.filename().string();
  if (name.empty()) name = submission.parent_path().filename().string();
  for (const char* ext : {".tar.gz", ".tar.xz", ".tar.bz2", ".tgz", ".zip", ".tar"}) {
    const std::string e = ext;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      name.resize(name.size() - e.size());
      break;
    }
  }
  return name;
}

}  // namespace

std::string Item::name() const {
  const std::string prefix = "lab" + lab + " ";
  switch (source) {
    case Source::visible: return prefix + test;
    case Source::hidden: return prefix + "hidden " + test;
    case Source::perf: return prefix + "perf " + test;
  }
  return prefix + test;
}

PhaseLock::PhaseLock(const fs::path& cache, bool exclusive) {
  gate_ = open((cache / ".phase-gate").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  lock_ = open((cache / ".phase-lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (gate_ < 0 || lock_ < 0) return;  // a read-only cache: no coordination, still correct
  auto take = [](int fd, int how) {
    while (flock(fd, how) != 0 && errno == EINTR) {
    }
  };
  // Writer preference: whoever waits at the gate blocks newcomers until it has the lock.
  take(gate_, LOCK_EX);
  take(lock_, exclusive ? LOCK_EX : LOCK_SH);
  flock(gate_, LOCK_UN);
}

PhaseLock::~PhaseLock() {
  if (lock_ >= 0) close(lock_);
  if (gate_ >= 0) close(gate_);
}

int sandbox_exec(const std::vector<std::string>& args) {
  if (args.empty()) throw std::invalid_argument("sandbox-exec SPEC.json [arguments...]");
  const json j = read_json(args[0]);
  SandboxSpec spec = spec_from_json(j);
  spec.argv.insert(spec.argv.end(), args.begin() + 1, args.end());
  // The driver's channel: our fds 3 and 4 go to the worker as its 3 and 4.
  spec.pass_fds = {};
  for (int fd : j.value("pass_fds", std::vector<int>{3, 4})) spec.pass_fds.push_back(fcntl(fd, F_DUPFD_CLOEXEC, 10));
  for (int fd : {3, 4}) close(fd);
  const RunResult r = run_sandboxed(spec);
  if (j.contains("log")) {
    std::ofstream log(j["log"].get<std::string>(), std::ios::app);
    log << "--- " << r.describe() << " (" << r.output_bytes << " bytes of output)\n" << r.output_with_note();
  }
  if (!r.started) return 127;
  if (r.exited) return r.code;
  return 128 + (r.signal ? r.signal : 9);
}

nlohmann::json GradeResult::to_json() const {
  json labs_json = json::array();
  for (const LabResult& l : labs) {
    json items_json = json::array();
    for (const Item& i : l.items)
      items_json.push_back({{"name", i.name()}, {"lab", i.lab}, {"source", to_string(i.source)}, {"test", i.test},
                            {"function", i.function}, {"score", i.score}, {"max_score", i.max_score}, {"status", i.status},
                            {"output", i.output}, {"visibility", i.visibility}, {"gate", i.gate}, {"forfeit", i.forfeit}, {"seconds", i.seconds},
                            {"details", i.details}});
    json plots = json::array();
    for (const auto& [name, svg] : l.plots) plots.push_back({{"case", name}, {"svg", "lab" + l.number + "-" + name + ".svg"}});
    labs_json.push_back({{"lab", l.number}, {"folder", l.folder}, {"title", l.title}, {"status", l.status},
                         {"build_output", l.build_output}, {"score", l.score}, {"max_score", l.max_score},
                         {"seconds", l.seconds}, {"notes", l.notes}, {"plots", plots}, {"items", items_json}});
  }
  json files_json = json::array();
  for (const SubmittedFile& f : files) files_json.push_back({{"path", f.path}, {"bytes", f.bytes}, {"hash", f.hash}});
  return {{"format", 1},        {"id", id},           {"submission", submission}, {"started_at", started_at},
          {"seconds", seconds}, {"score", score},     {"max_score", max_score},   {"seed", seed},
          {"cache_key", cache_key}, {"isolation", isolation}, {"ceilings", ceilings}, {"files", files_json}, {"labs", labs_json},
          {"warnings", warnings}};
}

GradeResult GradeResult::from_json(const nlohmann::json& j) {
  GradeResult g;
  g.id = j.value("id", "");
  g.submission = j.value("submission", "");
  g.started_at = j.value("started_at", "");
  g.seconds = j.value("seconds", 0.0);
  g.score = j.value("score", 0.0);
  g.max_score = j.value("max_score", 0.0);
  g.seed = j.value("seed", std::uint64_t{0});
  g.cache_key = j.value("cache_key", "");
  g.isolation = j.value("isolation", json::object());
  g.ceilings = j.value("ceilings", json());
  for (const json& f : items_of(j, "files")) g.files.push_back({f.value("path", ""), f.value("bytes", std::uint64_t{0}), f.value("hash", "")});
  for (const json& l : items_of(j, "labs")) {
    LabResult r;
    r.number = l.value("lab", "");
    r.folder = l.value("folder", "");
    r.title = l.value("title", "");
    r.status = l.value("status", "");
    r.build_output = l.value("build_output", "");
    r.score = l.value("score", 0.0);
    r.max_score = l.value("max_score", 0.0);
    r.seconds = l.value("seconds", 0.0);
    r.notes = l.value("notes", std::vector<std::string>{});
    for (const json& i : items_of(l, "items")) {
      Item item;
      item.lab = i.value("lab", "");
      item.source = source_from_string(i.value("source", "visible"));
      item.test = i.value("test", "");
      item.function = i.value("function", "");
      item.score = i.value("score", 0.0);
      item.max_score = i.value("max_score", 0.0);
      item.status = i.value("status", "");
      item.output = i.value("output", "");
      item.visibility = i.value("visibility", "visible");
      item.gate = i.value("gate", false);
      item.forfeit = i.value("forfeit", false);
      item.seconds = i.value("seconds", 0.0);
      item.details = i.value("details", json::object());
      r.items.push_back(item);
    }
    g.labs.push_back(r);
  }
  g.warnings = j.value("warnings", std::vector<std::string>{});
  return g;
}

GradeResult grade(const GradeOptions& o, std::ostream& log) {
  const auto start = Clock::now();
  GradeResult result;
  result.started_at = utc_now();
  result.submission = o.submission.string();
  result.id = o.id.empty() ? trimmed_id(o.submission) : o.id;
  // One base seed for the whole submission: every test and perf case derives its own from it, and
  // a failure names it so the student can replay it.
  result.seed = o.seed ? *o.seed : std::stoull(random_hex(6), nullptr, 16);
  setenv("WORKBOOK_SEED", std::to_string(result.seed).c_str(), 1);

  std::unique_ptr<Cache> cache;
  {
    CacheLock lock(o.cache, false);
    cache = std::make_unique<Cache>(Cache::load(o.cache));
  }
  CacheLock held(o.cache, false);  // no re-prepare while we grade
  result.cache_key = cache->key;
  result.isolation = isolation().to_json();
  if (!isolation().complete())
    for (const std::string& n : isolation().notes) result.warnings.push_back("isolation: " + n);

  Workspace ws(o.work.empty() ? fs::temp_directory_path() / ("workbook-grade-" + std::to_string(geteuid())) : o.work, o.slot, o.keep_work);
  Context c{o, *cache, ws, log, result.seed};
  // Parallel tests share the sandbox user; without a pid namespace leftovers are killed by user id,
  // which would hit the other test too.
  c.parallel_ok = isolation().pid_namespace || !isolation().root;
  log << "grading " << result.id << " (" << o.submission.string() << "), seed " << result.seed << "\n";

  // The submission: a folder, an archive, or the trusted tree's own reference or stub files.
  fs::path root;
  const std::string special = o.submission.string();
  if (special == "@reference" || special == "@stub") {
    root = ws.root / "intake";
    // Exactly what a student would hand in: the lab's files, and (the reference) its helper headers.
    for (const auto& [n, lab] : cache->labs) {
      const fs::path from_dir = cache->src() / (special == "@reference" ? "solutions" : "labs") / lab.folder;
      if (!fs::exists(from_dir)) continue;
      fs::create_directories(root / "labs" / lab.folder);
      for (const auto& e : fs::directory_iterator(from_dir)) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file() || name == "CMakeLists.txt") continue;
        fs::copy_file(e.path(), root / "labs" / lab.folder / name, fs::copy_options::overwrite_existing);
      }
    }
  } else if (fs::is_directory(o.submission)) {
    root = o.submission;
  } else if (fs::is_regular_file(o.submission) && is_archive(o.submission)) {
    root = unpack(c, o.submission);
  } else {
    throw std::invalid_argument(o.submission.string() + " is neither a folder nor an archive (.zip, .tar, .tar.gz, .tgz)");
  }

  // Which basenames are unambiguous across labs (for flat uploads).
  std::map<std::string, int> name_count;
  for (const auto& [n, lab] : cache->labs)
    for (const std::string& f : lab.student_files) ++name_count[fs::path(f).filename().string()];

  for (const std::string& n : o.labs)
    if (!cache->labs.count(n)) throw std::invalid_argument("there is no lab " + n + " in the grading cache " + o.cache.string());
  for (const auto& [n, lab] : cache->labs) {
    if (!o.labs.empty() && std::find(o.labs.begin(), o.labs.end(), n) == o.labs.end()) continue;
    std::string missing;
    bool submitted = true;
    const Rubric lab_rubric = lab.available ? cache->rubric(lab) : Rubric::default_for(n);
    fs::path submitted_folder;
    for (const std::string& f : lab.student_files) {
      const std::string relative = "labs/" + lab.folder + "/" + f;
      const auto found = locate(root, relative, name_count[fs::path(f).filename().string()] == 1);
      if (!found) {
        submitted = false;
        missing += relative + " is not in your submission. ";
        continue;
      }
      if (submitted_folder.empty()) submitted_folder = found->parent_path();
      try {
        const std::string data = read_submitted(*found, lab_rubric.max_source_bytes);
        const fs::path target = ws.src() / relative;
        fs::create_directories(target.parent_path());
        write_text_atomic(target, data);
        fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
        for (fs::path d = target.parent_path(); d != ws.src(); d = d.parent_path())
          fs::permissions(d, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
        result.files.push_back({relative, data.size(), hash_hex(data)});
      } catch (const std::invalid_argument& e) {
        submitted = false;
        missing += relative + " " + e.what() + ". ";
      }
    }
    // Optional files (helper headers) next to the sources; never one the lab itself provides.
    if (submitted && !submitted_folder.empty() && !lab_rubric.optional_files.empty()) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(submitted_folder, ec)) {
        const std::string name = e.path().filename().string();
        const bool wanted = std::any_of(lab_rubric.optional_files.begin(), lab_rubric.optional_files.end(),
                                        [&](const std::string& p) { return glob_match(p, name); });
        const bool required = std::find(lab.student_files.begin(), lab.student_files.end(), name) != lab.student_files.end();
        if (!wanted || required || fs::exists(lab.lab_dir / name) || !e.is_regular_file(ec) || e.is_symlink(ec)) continue;
        try {
          const std::string data = read_submitted(e.path(), lab_rubric.max_source_bytes);
          const std::string relative = "labs/" + lab.folder + "/" + name;
          write_text_atomic(ws.src() / relative, data);
          fs::permissions(ws.src() / relative, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
          result.files.push_back({relative, data.size(), hash_hex(data)});
        } catch (const std::invalid_argument&) {
        }
      }
    }
    LabResult lr = grade_lab(c, lab, submitted, missing);
    log << "  " << lab.name() << ": " << fixed(lr.score, 1) << " / " << fixed(lr.max_score, 1) << " (" << lr.status << ", "
        << fixed(lr.seconds, 1) << " s)\n" << std::flush;
    for (const std::string& n2 : lr.notes) result.warnings.push_back(lab.name() + ": " + n2);
    for (const std::string& w : lab.rubric_warnings) result.warnings.push_back(lab.name() + " rubric: " + w);
    result.score += lr.score;
    result.max_score += lr.max_score;
    result.labs.push_back(std::move(lr));
  }
  // The ceilings the perf cases were judged by (measured at prepare, or again by the driver).
  if (fs::exists(cache->ceilings)) {
    try {
      result.ceilings = read_json(cache->ceilings);
    } catch (const std::exception&) {
    }
  }
  result.seconds = since(start);
  write_outputs(result, o);
  log << "score " << fixed(result.score, 2) << " / " << fixed(result.max_score, 2) << " in " << fixed(result.seconds, 1) << " s\n";
  return result;
}

}  // namespace workbook::grade
