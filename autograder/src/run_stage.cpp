// Run (see run_stage.hpp): results come back only through channels the grader reads itself.
#include "run_stage.hpp"

#include <grade/sealed.hpp>
#include <workbook/skip.hpp>

#include <algorithm>
#include <cerrno>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

extern char** environ;

namespace workbook::grade {

using nlohmann::json;

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

void judge_visible(Item& item, const TestRun& t, const RunResult& r, const Context& c,
                   const LabRecipe& lab, const Rubric& rubric) {
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
  const std::string output =
      r.output.empty() ? ""
                       : "\nThe test printed:\n" +
                             fenced(cut(student_paths(r.output_with_note(), c.ws, c.cache), 3000));
  const std::string replay = "\n(Inputs from WORKBOOK_SEED=" + std::to_string(c.seed) +
                             "; replay with `WORKBOOK_SEED=" + std::to_string(c.seed) +
                             " ctest --preset lab" + lab.number + " -R '" + t.test + "'`.)";
  item.status = ItemStatus::failed;
  if (forged) {
    item.output =
        "Not credited: the test process wrote records to the grader's channel that the grader did "
        "not "
        "expect (a forged result?). The grader reads results from this channel only; printing or "
        "writing "
        "\"passed\" anywhere earns nothing.";
    item.details["forged"] = true;
  } else if (ended && result == "passed" && r.ok()) {
    item.status = ItemStatus::passed;
  } else if (ended && result == "passed") {
    item.output = "The test's checks passed, but then the test process " + r.describe() +
                  ": a crash at exit (a static object of yours?) fails the test." + output;
  } else if (ended && result == "skipped" &&
             std::any_of(
                 rubric.skip_reasons.begin(), rubric.skip_reasons.end(),
                 [&](const std::string& why) { return skip.find(why) != std::string::npos; })) {
    item.status = ItemStatus::skipped;
    item.output = "Not graded: the test skipped itself on this machine: " +
                  student_paths(skip, c.ws, c.cache);
  } else if (ended && result == "skipped") {
    item.output = "The test skipped itself for a reason the lab does not allow (" + cut(skip, 300) +
                  "): a skip is not a pass. Edit " + lab.edit() + "." + output;
  } else if (ended) {
    // The test's own failure messages (GoogleTest prints them again on stdout: not repeated).
    item.output = fenced(cut(student_paths(failures, c.ws, c.cache), 6000)) + "Edit " + lab.edit() +
                  "." + replay;
  } else if (started) {
    const std::string how =
        r.timed_out || r.output_flood || !r.exited
            ? r.describe()
            : "its process exited (code " + std::to_string(r.code) + ") in the middle of it";
    item.output =
        "The test did not finish: " + how + ".\n" +
        (failures.empty() ? "" : fenced(cut(student_paths(failures, c.ws, c.cache), 3000))) +
        "Edit " + lab.edit() + "." + replay + output;
  } else {
    item.output = "The test process ended before the test began (" + r.describe() +
                  "): code of yours that runs at start-up, or a crash while loading? Edit " +
                  lab.edit() + "." + output;
  }
}

void run_visible(Context& c, const LabRecipe& lab, const Rubric& rubric, std::vector<Item>& items,
                 Clock::time_point lab_start) {
  const double timeout = c.options.test_timeout.value_or(rubric.test_timeout_seconds);
  // A GPU lab's tests one at a time: they time kernels of known length, and share the GPU's memory.
  const int jobs = c.parallel_ok && !lab.gpu ? std::max(1, c.options.jobs) : 1;
  const fs::path exe = c.ws.bin(lab.name()) / "tests";
  const std::set<std::string> too_slow = hidden_timeouts(items);
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    if (item.source != Source::visible) continue;
    if (too_slow.count(item.function)) {
      item.status = ItemStatus::failed;
      item.output = "Not run: " + item.function +
                    " did not return in time in its hidden tests (see them), which guard this "
                    "test's points; it counts 0 until they pass. Edit " +
                    lab.edit() + ".";
      continue;
    }
    todo.push_back(i);
  }
  std::vector<std::pair<std::size_t, TestRun>> running;
  std::size_t next = 0;
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && static_cast<int>(running.size()) < jobs) {
      Item& item = items[todo[next]];
      ++next;
      if (since(lab_start) > rubric.lab_seconds) {
        item.status = ItemStatus::failed;
        item.output =
            "Not run: the lab's time budget (" + fixed(rubric.lab_seconds, 0) + " s) ran out.";
        continue;
      }
      TestRun t;
      t.test = item.test;
      t.nonce = random_hex(16);
      int channel[2], nonce[2];
      if (pipe2(channel, O_CLOEXEC) != 0 || pipe2(nonce, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
      const std::string line = t.nonce + "\n";
      if (write(nonce[1], line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        throw std::runtime_error("nonce write failed");
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
      c.log << "    " << items[it->first].name() << ": " << to_string(items[it->first].status)
            << "\n";
      it = running.erase(it);
    }
  }
}

std::set<std::string> hidden_timeouts(const std::vector<Item>& items) {
  std::set<std::string> out;
  for (const Item& i : items)
    if (i.source == Source::hidden && i.gate && i.details.value("timed_out", false))
      out.insert(i.function);
  return out;
}

// --- Hidden tests: the sealed checker (trusted) calls the student's worker in the sandbox
// --------------

void run_hidden(Context& c, const LabRecipe& lab, const Rubric& rubric, std::vector<Item>& items,
                Clock::time_point lab_start) {
  if (lab.checker.empty() || lab.hidden_tests.empty()) return;
  const double timeout = c.options.test_timeout.value_or(rubric.test_timeout_seconds);
  SandboxSpec worker = base_spec(c, rubric, 3600);
  worker.gpu = lab.gpu;
  worker.mounts.push_back({c.ws.bin(lab.name()).string(), false});
  worker.mounts.push_back({lab.lab_dir.string(), false});
  const fs::path spec_file = c.ws.priv() / (lab.name() + "-sealed-sandbox.json");
  write_json(spec_file, spec_to_json(worker));
  const fs::path report = c.ws.priv() / (lab.name() + "-hidden.json");
  const fs::path progress = c.ws.priv() / (lab.name() + "-hidden-progress.jsonl");
  // Each function's per-call deadline, from the reference's slowest call (sealed.hpp), so that
  // slow code fails its own tests in seconds and leaves the lab's budget to the others.
  std::string deadlines;
  for (const auto& [function, seconds] : lab.call_seconds)
    deadlines += (deadlines.empty() ? "" : ",") + function + "=" +
                 fixed(std::min(timeout, std::max(sealed::kCallDeadlineFloorSeconds,
                                                  sealed::kCallDeadlineFactor * seconds)),
                       3);
  SandboxSpec checker;
  checker.isolate = false;
  for (char** e = environ; *e; ++e) checker.env.push_back(*e);
  checker.env.push_back("WORKBOOK_SEALED_WORKER=" +
                        (c.ws.bin(lab.name()) / "sealed_worker").string());
  checker.env.push_back("WORKBOOK_SEALED_SANDBOX=" + spec_file.string());
  checker.env.push_back("WORKBOOK_SEALED_TIMEOUT=" + fixed(timeout, 1));
  checker.env.push_back("WORKBOOK_SEALED_DEADLINES=" + deadlines);
  checker.env.push_back("WORKBOOK_SEALED_PROGRESS=" + progress.string());
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
  if (r.exited && r.code == kEnvironmentErrorExit)
    throw EnvironmentError("the hidden tests' worker could not be isolated: " +
                           first_errors(r.output, 5));
  std::map<std::string, std::pair<ItemStatus, std::string>> results;  // test -> (result, failures)
  // The tests that ended, as they ended (all there is when the checker had to be stopped).
  if (fs::exists(progress)) {
    std::istringstream lines(read_text(progress));
    for (std::string line; std::getline(lines, line);) {
      try {
        const json e = json::parse(line);
        const std::string result = e.value("result", "");
        results[e.value("test", "")] = {result == "skipped"  ? ItemStatus::skipped
                                        : result == "passed" ? ItemStatus::passed
                                                             : ItemStatus::failed,
                                        e.value("failures", "")};
      } catch (const json::exception&) {
      }
    }
  }
  if (fs::exists(report)) {
    try {
      const json j = read_json(report);
      for (const json& suite : items_of(j, "testsuites")) {
        for (const json& t : items_of(suite, "testsuite")) {
          std::string failures;
          for (const json& f : items_of(t, "failures")) failures += f.value("failure", "") + "\n";
          const std::string name = suite.value("name", "") + "." + t.value("name", "");
          const ItemStatus result = t.value("result", "") == "SKIPPED" ? ItemStatus::skipped
                                    : failures.empty()                 ? ItemStatus::passed
                                                                       : ItemStatus::failed;
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
      item.status = ItemStatus::skipped;
      item.output =
          "Not graded: the hidden test skipped itself on this machine: " + cut(r.output, 300);
      continue;
    }
    if (found == results.end() && r.timed_out) {
      // The lab's budget ran out while earlier tests ran (each call has its own deadline, so slow
      // code spends it): not run, so not passed (they gate other points), but no sign of a forged
      // result and no fault of the grader.
      item.status = ItemStatus::failed;
      item.details["not_run"] = true;
      item.output = "Not run: the lab's time budget (" + fixed(rubric.lab_seconds, 0) +
                    " s) ran out before this hidden test (the tests before it were slow: see "
                    "their messages). Edit " +
                    lab.edit() + ".";
      continue;
    }
    if (found == results.end()) {
      // Fail closed: whatever stopped the checker, its tests did not pass (they gate other points).
      item.status = ItemStatus::failed;
      item.details["not_run"] = true;
      item.output = "Not run: the hidden-test checker stopped early (" + r.describe() +
                    "). If your code is not the "
                    "cause, tell your instructor: the grading is flagged for review.";
      item.details["grader_error"] = true;
      continue;
    }
    item.status = found->second.first;
    // The sealed checker's own words for a call that did not return by its deadline.
    if (item.status == ItemStatus::failed &&
        found->second.second.find(" did not return within ") != std::string::npos)
      item.details["timed_out"] = true;
    if (item.status == ItemStatus::failed) {
      // The checker's own file paths mean nothing to a student; the message says what to fix.
      std::string text = student_paths(found->second.second, c.ws, c.cache);
      text =
          std::regex_replace(text, std::regex(R"((^|\n)[^\n]*autograder/labs/[^\n]*:\d+\n)"), "$1");
      item.output = fenced(cut(text, 5000)) + "Edit " + lab.edit() +
                    ".\n(Hidden test; inputs from WORKBOOK_SEED=" + std::to_string(c.seed) + ".)";
    } else if (item.status == ItemStatus::skipped) {
      item.output = "Not graded: skipped on this machine.";
    }
    c.log << "    " << item.name() << ": " << to_string(item.status) << "\n";
  }
}

}  // namespace workbook::grade
