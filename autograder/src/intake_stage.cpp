// Intake (see intake_stage.hpp): nothing the student sent is trusted, its archive included.
#include "intake_stage.hpp"

#include <grade/archive.hpp>
#include <grade/gpu_access.hpp>
#include <grade/hash.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace workbook::grade {

bool is_archive(const fs::path& p) {
  return is_archive_name(p);
}

// Unpacks an archive in the sandbox, as the sandbox user: an archive is untrusted input too, and
// its parser (libarchive, in `workbook-grade unpack`) runs with no more rights than the student's
// code. It refuses what could reach outside the folder (archive.hpp).
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
  const fs::path grader = self_executable();
  if (!under_system_folder(grader.parent_path().string()))
    s.mounts.push_back({grader.parent_path().string(), false});
  s.argv = {grader.string(), "unpack", copy.string(), into.string()};
  const RunResult r = run_sandboxed(s);
  if (!r.ok())
    throw std::invalid_argument("the submission " + name +
                                " could not be unpacked: " + r.describe() + "\n" + r.output);
  return into;
}

// Finds `relative` (labs/<folder>/<file>) in a submission: at that path under the root or under one
// of its folders, else (a flat upload) a file with the same name when that name is unambiguous.
std::optional<fs::path> locate(const fs::path& root, const std::string& relative,
                               bool name_unique) {
  std::vector<fs::path> exact, by_name;
  const std::string name = fs::path(relative).filename().string();
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(
           root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it.depth() > 8) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string rel = it->path().lexically_relative(root).generic_string();
    if (it->is_directory() && (rel.find("/build") != std::string::npos ||
                               rel.rfind("build", 0) == 0 || it->path().filename() == ".git")) {
      it.disable_recursion_pending();
      continue;
    }
    if (rel == relative ||
        (rel.size() > relative.size() &&
         rel.compare(rel.size() - relative.size() - 1, std::string::npos, "/" + relative) == 0))
      exact.push_back(it->path());
    else if (it->path().filename() == name)
      by_name.push_back(it->path());
  }
  auto shortest = [](std::vector<fs::path>& v) {
    std::sort(v.begin(), v.end(), [](const fs::path& a, const fs::path& b) {
      return a.string().size() < b.string().size();
    });
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
  if (fd < 0)
    throw std::invalid_argument(errno == ELOOP ? "is a symbolic link (only regular files are taken)"
                                               : std::strerror(errno));
  struct stat s;
  if (fstat(fd, &s) != 0 || !S_ISREG(s.st_mode)) {
    close(fd);
    throw std::invalid_argument("is not a regular file");
  }
  if (static_cast<std::size_t>(s.st_size) > max_bytes) {
    close(fd);
    throw std::invalid_argument("is " + std::to_string(s.st_size >> 10) + " KiB, more than the " +
                                std::to_string(max_bytes >> 10) + " KiB allowed");
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

fs::path submission_root(const Context& c) {
  const GradeOptions& o = c.options;
  const Cache& cache = c.cache;
  const Workspace& ws = c.ws;
  fs::path root;
  const std::string special = o.submission.string();
  if (special == "@reference" || special == "@stub") {
    root = ws.root / "intake";
    // Exactly what a student would hand in: the lab's files, and (the reference) its helper
    // headers.
    for (const auto& [n, lab] : cache.labs) {
      const fs::path from_dir =
          lab.src() / (special == "@reference" ? "solutions" : "labs") / lab.folder;
      if (!fs::exists(from_dir)) continue;
      fs::create_directories(root / "labs" / lab.folder);
      for (const auto& e : fs::directory_iterator(from_dir)) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file() || name == "CMakeLists.txt") continue;
        fs::copy_file(e.path(), root / "labs" / lab.folder / name,
                      fs::copy_options::overwrite_existing);
      }
    }
  } else if (fs::is_directory(o.submission)) {
    root = o.submission;
  } else if (fs::is_regular_file(o.submission) && is_archive(o.submission)) {
    root = unpack(c, o.submission);
  } else {
    throw std::invalid_argument(o.submission.string() +
                                " is neither a folder nor an archive (.zip, .tar, .tar.gz, .tgz)");
  }
  return root;
}

std::string leaderboard_name(const fs::path& root) {
  const std::optional<fs::path> file = locate(root, "leaderboard.txt", true);
  if (!file) return "";
  std::string text;
  try {
    text = read_submitted(*file, 4096);
  } catch (const std::invalid_argument&) {
    return "";  // a link or a huge file: no name, as if there were no file
  }
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t key = line.find("leaderboard_name");
    if (key == std::string::npos) continue;
    const std::size_t sep = line.find_first_of(":=", key);
    if (sep == std::string::npos) continue;
    std::string name;
    for (const char ch : line.substr(sep + 1))
      if (ch >= 0x20 && ch < 0x7f && name.size() < 40) name += ch;
    const std::size_t first = name.find_first_not_of(' ');
    if (first == std::string::npos) return "";
    return name.substr(first, name.find_last_not_of(' ') - first + 1);
  }
  return "";
}

LabIntake take_lab_files(const Context& c, const fs::path& root, const LabRecipe& lab,
                         const Rubric& lab_rubric, const std::map<std::string, int>& name_count) {
  const Workspace& ws = c.ws;
  LabIntake in;
  fs::path submitted_folder;
  for (const std::string& f : lab.student_files) {
    const std::string relative = "labs/" + lab.folder + "/" + f;
    const auto count = name_count.find(fs::path(f).filename().string());
    const auto found = locate(root, relative, count != name_count.end() && count->second == 1);
    if (!found) {
      in.submitted = false;
      in.missing += relative + " is not in your submission. ";
      continue;
    }
    if (submitted_folder.empty()) submitted_folder = found->parent_path();
    try {
      const std::string data = read_submitted(*found, lab_rubric.max_source_bytes);
      const fs::path target = ws.src() / relative;
      fs::create_directories(target.parent_path());
      write_text_atomic(target, data);
      fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write |
                                  fs::perms::group_read | fs::perms::others_read);
      for (fs::path d = target.parent_path(); d != ws.src(); d = d.parent_path())
        fs::permissions(d, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
      in.files.push_back({relative, data.size(), hash_hex(data)});
    } catch (const std::invalid_argument& e) {
      in.submitted = false;
      in.missing += relative + " " + e.what() + ". ";
    }
  }
  // Optional files (helper headers) next to the sources; never one the lab itself provides.
  if (in.submitted && !submitted_folder.empty() && !lab_rubric.optional_files.empty()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(submitted_folder, ec)) {
      const std::string name = e.path().filename().string();
      const bool wanted =
          std::any_of(lab_rubric.optional_files.begin(), lab_rubric.optional_files.end(),
                      [&](const std::string& p) { return glob_match(p, name); });
      const bool required = std::find(lab.student_files.begin(), lab.student_files.end(), name) !=
                            lab.student_files.end();
      if (!wanted || required || fs::exists(lab.lab_dir / name) || !e.is_regular_file(ec) ||
          e.is_symlink(ec))
        continue;
      try {
        const std::string data = read_submitted(e.path(), lab_rubric.max_source_bytes);
        const std::string relative = "labs/" + lab.folder + "/" + name;
        write_text_atomic(ws.src() / relative, data);
        fs::permissions(ws.src() / relative, fs::perms::owner_read | fs::perms::owner_write |
                                                 fs::perms::group_read | fs::perms::others_read);
        in.files.push_back({relative, data.size(), hash_hex(data)});
      } catch (const std::invalid_argument&) {
      }
    }
  }
  return in;
}

}  // namespace workbook::grade
