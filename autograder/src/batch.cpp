// Batch grading: one `workbook-grade grade` process per submission, N at a time. A submission's
// outputs are written to a partial folder and renamed into place when complete: a folder under
// submissions/ is a finished result, and only those count, so an interrupted batch resumes without
// losing or duplicating anything.
#include <grade/batch.hpp>

#include <grade/markdown_html.hpp>
#include <grade/report.hpp>

#include <workbook/ceilings.hpp>
#include <workbook/report.hpp>
#include <workbook/stats.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t interrupted = 0;
void on_signal(int) {
  interrupted = 1;
}

std::string fixed(double v, int digits = 1) {
  return workbook::format_fixed(v, digits);
}

std::string duration(double s) {
  if (s < 90) return fixed(s, 0) + " s";
  if (s < 5400) return fixed(s / 60, 1) + " min";
  return fixed(s / 3600, 1) + " h";
}

// A submission's name in the gradebook: its file or folder name, archive extension removed, only
// characters that are safe in a path.
std::string id_of(const fs::path& p) {
  std::string name = p.filename().string();
  for (const char* ext : {".tar.gz", ".tar.xz", ".tar.bz2", ".tgz", ".zip", ".tar"}) {
    const std::string e = ext;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      name.resize(name.size() - e.size());
      break;
    }
  }
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
          c == '@'))
      c = '_';
  return name;
}

struct Job {
  std::string id;
  fs::path submission, partial, log;
  pid_t pid = -1;
  int slot = 0;
  Clock::time_point start;
};

pid_t spawn(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // its own group: an interrupted batch kills a job and everything it started
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // and a killed batch takes its jobs with it
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

std::string tail(const fs::path& file, std::size_t bytes) {
  if (!fs::exists(file)) return "";
  const std::string text = read_text(file);
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

}  // namespace

std::vector<std::pair<std::string, fs::path>> list_submissions(const fs::path& folder) {
  if (!fs::is_directory(folder))
    throw std::invalid_argument(folder.string() + " is not a folder of submissions");
  std::map<std::string, fs::path> all;
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    const std::string id = id_of(e.path());
    if (all.count(id))
      throw std::invalid_argument("two submissions are both called " + id + ": " +
                                  all[id].string() + " and " + e.path().string());
    all[id] = e.path();
  }
  return {all.begin(), all.end()};
}

void publish_result(const fs::path& partial, const fs::path& final_dir) {
  const fs::path old = final_dir.parent_path() / (".old-" + final_dir.filename().string());
  fs::remove_all(old);
  if (fs::exists(final_dir)) fs::rename(final_dir, old);
  fs::rename(partial, final_dir);
  fs::remove_all(old);
}

void require_known(const std::vector<std::string>& ids,
                   const std::vector<std::pair<std::string, fs::path>>& all,
                   const fs::path& folder) {
  for (const std::string& id : ids)
    if (std::none_of(all.begin(), all.end(), [&](const auto& s) { return s.first == id; })) {
      std::string known;
      for (std::size_t i = 0; i < all.size() && i < 20; ++i)
        known += (i ? ", " : "") + all[i].first;
      throw std::invalid_argument("--only " + id + ": there is no submission with that id in " +
                                  folder.string() + " (its ids: " + known +
                                  (all.size() > 20 ? ", ..." : "") + ")");
    }
}

int batch(const BatchOptions& o, std::ostream& log) {
  const std::vector<std::pair<std::string, fs::path>> all = list_submissions(o.submissions);
  const fs::path done_dir = o.out / "submissions";
  fs::create_directories(done_dir);
  fs::create_directories(o.out / "logs");
  for (const fs::path& d : {o.out, done_dir, o.out / "logs"})
    fs::permissions(d, fs::perms::owner_all);
  // Leftovers of an interrupted run: unfinished results and replaced ones.
  for (const auto& e : fs::directory_iterator(done_dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".partial-", 0) == 0 || name.rfind(".old-", 0) == 0) fs::remove_all(e.path());
  }

  require_known(o.only, all, o.submissions);
  std::vector<std::pair<std::string, fs::path>> todo;
  for (const auto& [id, path] : all) {
    const bool asked = std::find(o.only.begin(), o.only.end(), id) != o.only.end();
    if (o.only.empty() ? o.regrade || !fs::exists(done_dir / id / "record.json") : asked)
      todo.emplace_back(id, path);
  }
  if (o.only.empty())
    log << all.size() << " submissions, " << all.size() - todo.size() << " already graded, "
        << todo.size() << " to grade with " << o.jobs << " job(s)\n";
  else
    log << all.size() << " submissions, " << todo.size() << " to grade again (--only) with "
        << o.jobs << " job(s); the others' results are kept\n";
  log << std::flush;

  // Without SA_RESTART, so that the wait for a job returns when the instructor presses Ctrl-C.
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  const auto start = Clock::now();
  std::vector<Job> running;
  std::vector<int> free_slots;
  for (int s = o.jobs - 1; s >= 0; --s) free_slots.push_back(s);
  std::size_t next = 0, finished = 0, failures = 0, ungraded_labs = 0;
  double total_seconds = 0;
  while ((next < todo.size() || !running.empty()) && !interrupted) {
    while (next < todo.size() && !free_slots.empty() && !interrupted) {
      Job j;
      j.id = todo[next].first;
      j.submission = todo[next].second;
      ++next;
      j.slot = free_slots.back();
      free_slots.pop_back();
      j.partial = done_dir / (".partial-" + j.id);
      j.log = o.out / "logs" / (j.id + ".log");
      fs::remove_all(j.partial);
      std::vector<std::string> argv = {self_executable().string(),
                                       "grade",
                                       j.submission.string(),
                                       "--out",
                                       j.partial.string(),
                                       "--id",
                                       j.id,
                                       "--cache",
                                       o.cache.string(),
                                       "--slot",
                                       std::to_string(j.slot),
                                       "--jobs",
                                       "1",
                                       "--no-prepare"};
      if (!o.work.empty()) argv.insert(argv.end(), {"--work", o.work.string()});
      argv.insert(argv.end(), o.grade_arguments.begin(), o.grade_arguments.end());
      j.start = Clock::now();
      j.pid = spawn(argv, j.log);
      running.push_back(j);
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    const auto it =
        std::find_if(running.begin(), running.end(), [&](const Job& j) { return j.pid == pid; });
    if (it == running.end()) continue;
    Job j = *it;
    running.erase(it);
    free_slots.push_back(j.slot);
    const double seconds = std::chrono::duration<double>(Clock::now() - j.start).count();
    ++finished;
    const bool exited = WIFEXITED(status);
    const bool some_labs_not_graded = exited && WEXITSTATUS(status) == kExitLabsNotGraded;
    const bool ok = exited && (WEXITSTATUS(status) == 0 || some_labs_not_graded) &&
                    fs::exists(j.partial / "record.json");
    ungraded_labs += some_labs_not_graded;
    std::string line = "[" + std::to_string(all.size() - todo.size() + finished) + "/" +
                       std::to_string(all.size()) + "] " + j.id + ": ";
    if (ok) {
      total_seconds += seconds;
      fs::copy_file(j.log, j.partial / "grade.log", fs::copy_options::overwrite_existing);
      const fs::path final_dir = done_dir / j.id;
      publish_result(j.partial, final_dir);
      const json record = read_json(final_dir / "record.json");
      line += fixed(record.value("score", 0.0), 2) + " / " +
              fixed(record.value("max_score", 0.0), 2) + " in " + fixed(seconds) + " s";
      if (some_labs_not_graded)
        line += " (some labs could not be graded on this machine: see " + j.log.string() + ")";
    } else {
      ++failures;
      fs::remove_all(j.partial);
      line += "NOT GRADED (grader error, see " + j.log.string() + "; retried on the next run)";
      std::ofstream(o.out / "errors.log", std::ios::app) << utc_now() << " " << j.id << ":\n"
                                                         << tail(j.log, 2000) << "\n";
    }
    const std::size_t left = todo.size() - finished;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const std::size_t good = finished - failures;
    if (left > 0 && good > 0)
      line += "; elapsed " + duration(elapsed) + ", about " +
              duration(total_seconds / static_cast<double>(good) * static_cast<double>(left) /
                       std::max(1, std::min<int>(o.jobs, static_cast<int>(left)))) +
              " left";
    log << line << "\n" << std::flush;
    write_json(o.out / "progress.json", {{"graded", all.size() - todo.size() + finished - failures},
                                         {"total", all.size()},
                                         {"failures", failures},
                                         {"elapsed_seconds", elapsed},
                                         {"updated_at", utc_now()}});
  }
  if (interrupted) {
    log << "interrupted: stopping " << running.size()
        << " job(s); finished results are kept, the rest is graded on the next run\n";
    for (const Job& j : running) kill(-j.pid, SIGKILL);
    for (const Job& j : running) {
      waitpid(j.pid, nullptr, 0);
      fs::remove_all(j.partial);
    }
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  write_summary(o.out, o.summary, log);
  if (failures > 0 || interrupted) return kExitSubmissionsNotGraded;
  return ungraded_labs > 0 ? kExitLabsNotGraded : 0;
}

}  // namespace workbook::grade
