#include <workbook/internal/perf_driver.hpp>

#include <workbook/ceilings.hpp>
#include <workbook/internal/subprocess.hpp>
#include <workbook/perf.hpp>
#include <workbook/report.hpp>
#include <workbook/roofline.hpp>
#include <workbook/seed.hpp>
#include <workbook/skip.hpp>
#include <workbook/stats.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <unistd.h>
#include <csignal>

#include <nlohmann/json.hpp>

namespace workbook::perf {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A worker that takes far longer than it should is stopped early, with what its threads were
// doing, rather than after DriverOptions::timeout_seconds: after DriverOptions::stall_seconds, or
// more where the step should take long: kBatchFactor times a batch's time by the calls so far, or
// kSetUpFactor times the reference's set-up (which a kernel far slower than the reference's also
// goes through: inputs, the oracle, the checked call).
constexpr double kBatchFactor = 50;
constexpr double kSetUpFactor = 20;

// Why a worker could not be timed: the verdict's reason.
struct WorkerFailure : std::runtime_error {
  WorkerFailure(Reason reason, const std::string& message)
      : std::runtime_error(message), reason(reason) {}
  Reason reason;
};

// One worker process running one perf case, spoken to in JSON lines, with a shared memory of its
// own (fd 5 in the worker) into which it copies the output of each batch the driver checks, each
// check at an offset of its own. Its whole process tree can be frozen (TreeFreezer) and its CPU
// time read, so that while "kept apart" it runs only inside the batches the driver times.
class Worker {
 public:
  Worker(std::string who, const std::string& executable, const DriverOptions& o)
      : who_(std::move(who)),
        lab_(o.lab),
        timeout_(o.timeout_seconds),
        stall_seconds_(o.stall_seconds),
        freezer_("workbook-perf"),
        asked_(Clock::now()) {
    memfd_ = memfd_create("workbook-perf-output", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memfd_ < 0)
      throw std::runtime_error(std::string("shared memory for a perf worker: ") +
                               std::strerror(errno));
    process_ = std::make_unique<Subprocess>(Subprocess::Options{
        .argv = {executable, "--worker", "--case", o.case_name, "--seed", std::to_string(o.seed)},
        .channel = true,
        .environment = std::nullopt,
        .extra_fds = {memfd_},
        .cgroup_procs = freezer_.cgroup_procs()});
    freezer_.attach(process_->pid());
  }
  // A worker keeps nothing worth saving: when the driver is done (or gives up), it is killed.
  ~Worker() {
    // The whole tree goes with it: a process the kernel started must not outlive the test.
    freezer_.thaw();
    for (pid_t p : freezer_.pids()) ::kill(p, SIGKILL);
    process_.reset();
    close(memfd_);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Room for `slots` checked outputs of `bytes` each (the output, and the reference's scales).
  void reserve(std::size_t bytes, int slots) {
    constexpr std::size_t kAlign = 64 * 1024;  // a multiple of any page size: mmap's offsets
    stride_ = (bytes + kAlign - 1) / kAlign * kAlign;
    slots_ = slots;
    if (ftruncate(memfd_, static_cast<off_t>(stride_ * static_cast<std::size_t>(slots))) != 0)
      throw std::runtime_error(std::string("sizing a perf worker's shared memory: ") +
                               std::strerror(errno));
  }
  // The kernel's `k`-th batch from now (0: the next) is checked under `tag`: poisoned first, its
  // output copied to a slot of the shared memory after (and the scales, when `with_scale`).
  void arm(int k, bool with_scale, std::string tag) {
    armed_ = k;
    with_scale_ = with_scale;
    armed_tag_ = std::move(tag);
  }
  // The number of the kernel's batch checked under `tag` (warm-up included), or -1.
  int checked_batch(const std::string& tag) const {
    const auto it = checks_.find(tag);
    return it == checks_.end() ? -1 : it->second.batch;
  }
  // The output copied under `tag` (the scales after it), read while the worker was frozen; empty
  // when that check was not made (yet).
  std::span<const std::byte> copied(const std::string& tag) const {
    const auto it = checks_.find(tag);
    return it == checks_.end() ? std::span<const std::byte>() : std::span(it->second.bytes);
  }
  // Frees the copy made under `tag`, once compared (its batch number stays known).
  void drop_copy(const std::string& tag) {
    if (auto it = checks_.find(tag); it != checks_.end()) it->second.bytes = {};
  }
  // A batch of one call, checked, outside the timing: when the comparison ended before the batch
  // chosen to be checked.
  void check_one_more(bool with_scale, const std::string& tag) {
    arm(0, with_scale, tag);
    run_kernel(1);
  }
  // Once every check is made: the shared memory is sealed, which fails while any process keeps a
  // writable mapping of it (code that could have changed a copied output behind the harness).
  void seal() {
    if (fcntl(memfd_, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
      throw WorkerFailure(
          Reason::output_tampered,
          who_ +
              " kept the shared memory of its output mapped for writing after copying "
              "the output of a timed call (" +
              std::strerror(errno) +
              "): code in your kernel's process could change the output after the "
              "check. Your kernel must not touch the harness's descriptors.");
  }

  // The worker whose times tell how long this one's steps should take (the reference's, for the
  // student's worker): awaited first, it sets the patience for this one's (see await_ready() and
  // receive_batch()).
  void judge_by(const Worker& peer) { peer_ = &peer; }

  // The case's own description, once the worker has checked the kernel and is ready to time it
  // (or, after fresh(), has set it up on the new inputs).
  json await_ready() {
    const double elapsed = std::chrono::duration<double>(Clock::now() - asked_).count();
    const double peer_took = peer_ ? peer_->ready_seconds_ : 0;
    const double limit =
        peer_took > 0 ? std::max(stall_seconds_, kSetUpFactor * peer_took) : timeout_;
    json m =
        receive("setting up its inputs and checking its first call", limit - elapsed,
                peer_took > 0 ? "the reference's set-up took " + format_seconds(peer_took) : "");
    ready_seconds_ = std::chrono::duration<double>(Clock::now() - asked_).count();
    const std::string type = m.value("type", "");
    if (type == "ready") return m;
    if (type == "not_implemented")
      throw WorkerFailure(Reason::not_implemented, m.at("message").get<std::string>());
    if (type == "skipped") throw WorkerFailure(Reason::skipped, m.at("message").get<std::string>());
    if (type == "wrong") {
      // Named by the function the student wrote, where the case is named otherwise
      // ("square_10000x10000" times square).
      const std::string function = m.value("function", "");
      const std::size_t last = who_.rfind(' ');  // who_ is "your <case>" or "the reference <case>"
      const bool named = function.empty() || last == std::string::npos ||
                         who_.compare(last + 1, std::string::npos, function) == 0;
      throw WorkerFailure(Reason::wrong,
                          (named ? who_
                                 : who_.substr(0, last) + " " + function + " (perf case " +
                                       who_.substr(last + 1) + ")") +
                              " gives wrong results, so its speed is not measured:\n" +
                              m.at("report").get<std::string>());
    }
    throw WorkerFailure(Reason::worker_error, who_ + ": " + m.value("message", m.dump()));
  }
  // Asks the worker to set its case up again on inputs drawn from `seed` (await_ready() after).
  void fresh(std::uint64_t seed) {
    send(json{{"cmd", "fresh"}, {"seed", seed}});
    asked_ = Clock::now();
  }

  // From now on the worker runs only inside its batches: frozen between them (on), or running
  // freely (off: setting up, verifying, the extras).
  void keep_apart(bool on) {
    if (on == apart_) return;
    apart_ = on;
    if (on) {
      freezer_.freeze();
      frozen_pids_ = freezer_.pids();
      last_cpu_ = cpu_seconds(frozen_pids_);
    } else {
      freezer_.thaw();
    }
  }
  std::string apart_how() const { return freezer_.describe(); }

  // Runs `count` timed calls in the worker (of the kernel, or of extra number `extra`). Also keeps
  // the driver's own clock of each batch, which code under test cannot forge (it includes the
  // channel's round trip, microseconds).
  BatchRunner runner(int extra = -1) {
    return [this, extra](int count) {
      const Seen seen = batch(count, extra);
      if (extra < 0) driver_seconds.push_back(seen.clock / count);
      return seen.reported;
    };
  }
  // The first call on fresh inputs, checked under `tag`: what the worker reported and the driver's
  // clock, seconds (not in driver_seconds: no batch of the comparison).
  // Checked only when `checked` (the case declares an output).
  std::pair<double, double> first_call(bool checked, bool with_scale, const std::string& tag) {
    if (checked) arm(0, with_scale, tag);
    const Seen seen = batch(1, -1);
    // Not a batch of the comparison: the numbers of those stay as the rounds count them.
    --batches_;
    if (auto it = checks_.find(tag); it != checks_.end()) it->second.batch = -1;
    return {seen.reported.at(0), seen.clock};
  }

  // After the timed runs: did the last run write every output correctly? Asked of both workers
  // first, then awaited, so that the two checks run at the same time.
  void request_verify() { send(json{{"cmd", "verify"}}); }
  void await_verify() {
    json m = receive("checking the output of the timed runs");
    if (!m.value("ok", false))
      throw WorkerFailure(Reason::wrong,
                          who_ +
                              " was right once but wrong after the timed runs (a race, a "
                              "stale output, or a result cached between calls?):\n" +
                              m.value("report", ""));
  }

  std::vector<double> driver_seconds;
  CpuAccount account;  // over the batches run while kept apart

 private:
  struct Seen {
    std::vector<double> reported;
    double clock = 0;  // the round trip, seconds
  };
  // One batch: thawed just before and frozen again just after when kept apart, its CPU time counted
  // from the frozen state before to the frozen state after, so that nothing it does escapes.
  Seen batch(int count, int extra) {
    const double before = apart_ ? cpu_seconds(frozen_pids_) : 0;
    const long faults_before = extra < 0 ? minor_page_faults(process_->pid()) : 0;
    const auto window = Clock::now();
    if (apart_) freezer_.thaw();
    const auto start = Clock::now();
    json m = extra < 0 ? run_kernel(count) : run_extra(extra, count);
    Seen seen{m.at("seconds").get<std::vector<double>>(),
              std::chrono::duration<double>(Clock::now() - start).count()};
    (extra < 0 ? per_call_ : extra_per_call_[extra]) = seen.clock / count;
    // A checked batch's count would include the copy of its output for the driver: not counted.
    if (extra < 0 && !checked_now_) {
      account.page_faults += std::max(0L, minor_page_faults(process_->pid()) - faults_before);
      account.faulted_calls += count;
    }
    if (apart_) {
      freezer_.freeze();
      frozen_pids_ = freezer_.pids();
      const double after = cpu_seconds(frozen_pids_);
      account.cpu_seconds += after - before;
      account.outside_seconds += std::max(0.0, before - last_cpu_);
      account.window_seconds += std::chrono::duration<double>(Clock::now() - window).count();
      account.calls += count;
      last_cpu_ = after;
    }
    if (!armed_tag_.empty() && checked_now_) {
      // Copied while the worker is frozen (when kept apart): what it wrote for the check.
      const std::size_t need = stride_;
      void* p = mmap(nullptr, need, PROT_READ, MAP_SHARED, memfd_,
                     static_cast<off_t>(stride_ * static_cast<std::size_t>(slot_ - 1)));
      if (p == MAP_FAILED)
        throw std::runtime_error(std::string("mapping a worker's output: ") + std::strerror(errno));
      const auto* bytes = static_cast<const std::byte*>(p);
      checks_[armed_tag_] = {batches_ - 1, std::vector<std::byte>(bytes, bytes + need)};
      munmap(p, need);
      // The copy is the driver's now: the shared memory's pages go back (an output can be large).
      (void)fallocate(memfd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      static_cast<off_t>(stride_ * static_cast<std::size_t>(slot_ - 1)),
                      static_cast<off_t>(stride_));
      armed_tag_.clear();
      checked_now_ = false;
    }
    return seen;
  }
  json run_kernel(int count) {
    ++batches_;
    const bool checked = armed_ == 0;
    if (armed_ >= 0) --armed_;
    json command = {{"cmd", "run"}, {"count", count}};
    if (checked) {
      if (slot_ >= slots_)
        throw std::logic_error("a perf worker was asked for more checks than it has room for");
      command.update({{"snapshot", true},
                      {"scale", with_scale_},
                      {"offset", stride_ * static_cast<std::size_t>(slot_)}});
      ++slot_;
      checked_now_ = true;
    }
    send(command);
    json m = receive_batch(count, -1);
    if (m.value("type", "") != "times")
      throw WorkerFailure(Reason::worker_error,
                          who_ + " failed while timed: " + m.value("message", m.dump()));
    if (checked && !m.value("snapshot", false))
      throw WorkerFailure(Reason::worker_error, who_ + " did not copy its output as asked");
    return m;
  }
  json run_extra(int extra, int count) {
    send(json{{"cmd", "run_extra"}, {"index", extra}, {"count", count}});
    json m = receive_batch(count, extra);
    if (m.value("type", "") != "times")
      throw WorkerFailure(Reason::worker_error,
                          who_ + " failed while timed: " + m.value("message", m.dump()));
    return m;
  }
  void send(const json& m) {
    if (!process_->send(m.dump())) throw died("while receiving a command");
  }
  // A batch of `count` calls should take about count times the last call's time (this worker's,
  // else the peer's, else the peer's whole set-up, which made one call at least); an extra's
  // (another function the case times) by its own calls only.
  json receive_batch(int count, int extra) {
    double per_call = extra < 0 ? per_call_ : extra_per_call_[extra];
    std::string expected;
    if (per_call > 0) {
      expected = "its calls so far took " + format_seconds(per_call) + " each";
    } else if (extra < 0 && peer_ && peer_->per_call_ > 0) {
      per_call = peer_->per_call_;
      expected = "a call of the reference's takes " + format_seconds(per_call);
    } else if (extra < 0 && peer_ && peer_->ready_seconds_ > 0) {
      per_call = peer_->ready_seconds_;
      expected =
          "the reference's whole set-up, a checked call included, took " + format_seconds(per_call);
    }
    const std::string doing = count == 1 ? std::string("a timed call")
                                         : "a batch of " + std::to_string(count) + " timed calls";
    return receive(
        doing, per_call > 0 ? std::max(stall_seconds_, kBatchFactor * count * per_call) : timeout_,
        expected);
  }
  // Waits for the worker's next reply, at most `patience` seconds (capped by timeout_); `expected`
  // says what it should have taken (shown when the worker is stopped for taking too long).
  json receive(const std::string& doing, double patience = -1, const std::string& expected = "") {
    const double wait = patience < 0 ? timeout_ : std::min(std::max(patience, 0.0), timeout_);
    std::string line;
    switch (process_->read_line(line, wait)) {
      case Subprocess::Read::line:
        try {
          return json::parse(line);
        } catch (const json::exception&) {
          throw WorkerFailure(Reason::worker_error, who_ + " sent a malformed reply: " + line);
        }
      case Subprocess::Read::timeout:
        if (wait < timeout_) throw stalled(doing, expected);
        freezer_.thaw();
        process_->kill();
        throw WorkerFailure(Reason::timeout, who_ + " did not answer within " +
                                                 format_fixed(timeout_, 0) + " s while " + doing +
                                                 ": an endless loop, or far too slow");
      case Subprocess::Read::end:
        break;
    }
    throw died("while " + doing);
  }
  // The worker has taken far longer than `expected`: what its threads do over one second says
  // whether it sleeps (waits for something that never comes), works flat out, or spends its time
  // handing the CPU from thread to thread. Then it is stopped.
  WorkerFailure stalled(const std::string& doing, const std::string& expected) {
    freezer_.thaw();
    const double waited = std::chrono::duration<double>(Clock::now() - asked_).count();
    const std::vector<pid_t> pids = freezer_.pids();
    const TreeActivity before = tree_activity(pids);
    const auto start = Clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const TreeActivity after = tree_activity(freezer_.pids());
    const double span = std::chrono::duration<double>(Clock::now() - start).count();
    process_->kill();
    const double cpu = std::max(0.0, after.cpu - before.cpu) / span;
    const double switches =
        static_cast<double>(std::max(0L, after.switches - before.switches)) / span;
    const std::string reading = stalled_reading(cpu, switches);
    return WorkerFailure(Reason::timeout,
                         who_ + " had not finished " + doing + " after " + format_fixed(waited, 0) +
                             " s" + (expected.empty() ? "" : " (" + expected + ")") +
                             ", so it was stopped. In the second after that, its process ran " +
                             std::to_string(after.threads) +
                             (after.threads == 1 ? " thread" : " threads") + ", used " +
                             format_fixed(cpu, 2) + " s of CPU per second and switched threads " +
                             format_fixed(switches, 0) + " times per second: " + reading +
                             ". Run the correctness tests first (ctest --preset " + lab_ +
                             " -L correctness): they call your code on small inputs.");
  }
  WorkerFailure died(const std::string& doing) {
    const auto exit = process_->wait(10);
    return WorkerFailure(
        Reason::crashed,
        who_ + " crashed " + doing + " (" +
            (exit ? exit->describe() : std::string("no exit status")) +
            "). Run the correctness tests first; a crash there is easier to debug.");
  }

  struct Check {
    int batch = -1;
    std::vector<std::byte> bytes;
  };
  std::string who_;
  std::string lab_;
  double timeout_, stall_seconds_;
  TreeFreezer freezer_;
  Clock::time_point asked_;   // when the step awaited now was asked for (started, or fresh())
  double ready_seconds_ = 0;  // the last set-up's time, from asked_ to ready
  double per_call_ = 0;       // the last batch's time per call, by the driver's clock
  std::map<int, double> extra_per_call_;  // the same for each extra
  const Worker* peer_ = nullptr;
  int memfd_ = -1;
  std::size_t stride_ = 0;
  int slots_ = 0, slot_ = 0;
  int armed_ = -1, batches_ = 0;
  bool with_scale_ = false, checked_now_ = false, apart_ = false;
  std::string armed_tag_;
  std::map<std::string, Check> checks_;
  std::vector<pid_t> frozen_pids_;
  double last_cpu_ = 0;
  std::unique_ptr<Subprocess> process_;
};

// The driver's check of a timed call, as the reference's worker declared its output; none when
// the case declares no output.
std::optional<OutputCheck> output_check_of(const json& ready) {
  if (!ready.contains("output") || ready["output"].is_null()) return std::nullopt;
  const json& o = ready["output"];
  OutputCheck c;
  c.element = element_from_string(o.at("element").get<std::string>());
  c.count = o.at("count").get<std::size_t>();
  c.tolerance = {o.at("tolerance").at("rel").get<double>(),
                 o.at("tolerance").at("abs").get<double>(),
                 o.at("tolerance").value("derivation", "")};
  c.scaled = o.value("scaled", false);
  return c;
}

// A value as a student reads it: integers as integers, floats with all their digits.
std::string show(double v, Element e) {
  char text[40];
  if (e == Element::f32)
    std::snprintf(text, sizeof text, "%.9g", v);
  else
    std::snprintf(text, sizeof text, "%.0f", v);
  return text;
}

// Both outputs are within rel * scale + abs of the exact answer, so within twice that of each
// other. Without a scale the check's is |exact|, which is at most max(|s|, |r|) / (1 - rel).
double allowed_difference(const OutputCheck& c, const float* scale, std::size_t i, double s,
                          double r) {
  const double rel = c.tolerance.rel;
  const double magnitude =
      scale ? double(scale[i]) : std::max(std::fabs(s), std::fabs(r)) / (rel < 1 ? 1 - rel : 1);
  return 2 * (rel * magnitude + c.tolerance.abs);
}

template <class T>
std::optional<OutputDifference> compare_as(const OutputCheck& c, const T* yours, const T* reference,
                                           const float* scale) {
  OutputDifference d;
  for (std::size_t i = 0; i < c.count; ++i) {
    const T s = yours[i], r = reference[i];
    const bool poisoned = Poison<T>::is_value(s) && !Poison<T>::is_value(r);
    double allowed = 0;
    bool same;
    if constexpr (std::is_floating_point_v<T>) {
      if (poisoned) {
        same = false;
      } else if (std::isnan(s) || std::isnan(r)) {
        same = std::isnan(s) && std::isnan(r);
      } else if (s == r) {
        same = true;  // infinities and zeros of either sign too
      } else {
        allowed = allowed_difference(c, scale, i, double(s), double(r));
        same = std::fabs(double(s) - double(r)) <= allowed;
      }
    } else {
      allowed = allowed_difference(c, scale, i, double(s), double(r));
      same = !poisoned && std::fabs(double(s) - double(r)) <= allowed;
    }
    if (same) continue;
    if (d.differing++ == 0) {
      d.first = i;
      d.yours = double(s);
      d.reference = double(r);
      d.allowed = allowed;
      d.never_written = poisoned;
    }
  }
  if (d.differing == 0) return std::nullopt;
  return d;
}

// The driver's own clock of the timed batches: a worker's first `warmup` batches are its warm-up;
// the batch whose output was checked (`checked`, -1 for none) is left out too, since its round
// trip includes the poisoning before it and the copy after it.
std::vector<double> timed_batches(const std::vector<double>& all, int warmup, int checked) {
  std::vector<double> timed;
  for (std::size_t k = static_cast<std::size_t>(std::max(warmup, 0)); k < all.size(); ++k)
    if (static_cast<int>(k) != checked) timed.push_back(all[k]);
  return timed;
}

// --- Reference profiles --------------------------------------------------------------------------

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return json::parse(in);
}

void record_profile(const std::string& path, const std::string& lab, const std::string& case_name,
                    const Analysis& a, const Ceilings& c) {
  json profile = {{"format", 1},
                  {"lab", lab},
                  {"about",
                   "The fraction of its roofline each reference kernel reached, measured by "
                   "tools/update_reference_data.sh. The student kit has no solutions: "
                   "its perf tests expect the reference's time to be the roofline time / "
                   "fraction on the student's own machine."},
                  {"cases", json::object()}};
  if (std::ifstream in(path); in) profile = json::parse(in);
  profile["cases"][case_name] = {
      {"fraction_of_roof", a.fraction_of_roof},
      {"bound", to_string(a.bound)},
      {"seconds", a.seconds},
      // As the handout's table shows them (cmake/ReferenceData.cmake writes it, and CMake has no
      // floating point).
      {"shown_time", format_seconds(a.seconds)},
      {"percent_of_roof", std::lround(100 * a.fraction_of_roof)},
      {"measured_on", c.device.empty() ? c.machine.cpu_model + ", " + c.machine.simd : c.device},
      {"measured_at", c.measured_at}};
  write_file(path, profile.dump(2) + "\n");
}

double profile_fraction(const std::string& path, const std::string& case_name) {
  const json profile = read_json_file(path);
  if (!profile.contains("cases") || !profile["cases"].contains(case_name))
    throw std::runtime_error(path + " has no entry for the perf case '" + case_name + "'");
  const double f = profile["cases"][case_name].at("fraction_of_roof").get<double>();
  if (!(f > 0 && f <= 1.5))
    throw std::runtime_error(path + ": a fraction of " + std::to_string(f) + " is not plausible");
  return f;
}

}  // namespace

namespace {

// Honest code keeps at most the case's threads busy while it is timed: its only other threads are
// the runtime's (CUDA's, the C++ library's), which mostly sleep, and children it reaped count in
// 10 ms ticks. The CPU time of the worker's whole tree over its windows (thaw to freeze), against
// threads x those windows' length: 25% above (and 20 ms in all) leaves room for the runtime; a
// call that leaves half its work to a thread of its own shows 2x, threads left spinning more. The
// windows are the host's time, so this holds for a GPU worker too, whose host thread spins or
// sleeps while the GPU works (what the GPU does is bounded by the driver's clock instead).
constexpr double kCpuMargin = 1.25, kCpuSlackSeconds = 0.02;
// CPU time between a worker's batches, while it is frozen, is none; beyond 10% of its time in
// them (and the slack), the freezing did not hold, and that work is counted as the calls'.
constexpr double kOutsideShare = 0.1;
// The first call on fresh inputs against the calls after it: the reference's own ratio is the
// control (cold caches and whatever else a first call costs, alike for both kernels). A first
// call 1.5x slower relative to its repeats than the reference's, in every one of at least two sets
// of inputs, is a kernel that keeps something between calls: a neighbour slows one call, not the
// first of every set, and caching buys far more than 1.5x (the whole call).
constexpr double kFreshMargin = 1.5;
constexpr std::size_t kFreshSetsToJudge = 2;
// The driver's clock of a batch also counts what a worker's median of its calls leaves out (a
// neighbour that took the core between two calls, the channel's round trip, a GPU's L2 flush), in
// both workers alike, round by round. Within 15% of the ratio the workers reported in the same
// round, that is the noise of a shared machine, and the report stands. A worker that reports less
// than its calls took shows it in every round; a neighbour slows some rounds, not all (on a loaded
// machine an honest kernel's clock was seen 1.21x its report in one comparison's median, which
// the old rule, a median of the rounds' clocks against the report, flagged). So the report is
// refuted, with at least two rounds, where every round's clock exceeds it beyond the margin, or
// where, each round's report raised to its clock less the margin, the median rises beyond the
// margin (a worker honest in a few rounds only); and the student's calls also took longer by the
// clock than its worker says. Refuted, it is judged by the median of the rounds' clock ratios.
constexpr double kClockMargin = 1.15;
constexpr std::size_t kClockRoundsToJudge = 2;

double median(std::vector<double> v) {
  return v.empty() ? 0 : summarize(std::move(v)).median;
}

}  // namespace

Graded grade(const Evidence& e) {
  Graded g;
  g.apart = e.apart;
  g.yours = e.yours_cpu;
  g.reference = e.reference_cpu;
  g.reference_seconds = e.reference_reported;
  g.reported_ratio = e.reference_reported > 0 ? e.yours_reported / e.reference_reported : 0;
  g.seconds = e.yours_reported;
  // Per round: the ratio the workers reported and the one the driver's clock saw.
  std::vector<double> reported, clocked, raised;
  std::size_t beyond = 0;  // rounds whose clock exceeds the report beyond the margin
  for (const Evidence::Round& r : e.rounds) {
    if (!(r.yours_reported > 0 && r.yours_clock > 0 && r.reference_reported > 0 &&
          r.reference_clock > 0))
      continue;
    reported.push_back(r.yours_reported / r.reference_reported);
    clocked.push_back(r.yours_clock / r.reference_clock);
    raised.push_back(std::max(reported.back(), clocked.back() / kClockMargin));
    beyond += clocked.back() > kClockMargin * reported.back();
  }
  const bool refuted =
      reported.size() >= kClockRoundsToJudge && g.reported_ratio > 0 &&
      e.yours_clock > kClockMargin * e.yours_reported &&
      (beyond == reported.size() || median(raised) > kClockMargin * median(reported));
  if (refuted) {
    const double clock = median(clocked);
    g.seconds = std::max(g.seconds, clock * e.reference_reported);
    g.flags.push_back("your worker reported " + format_ratio(g.reported_ratio) +
                      " the reference's time per call, but the driver's clock saw " +
                      format_ratio(clock) + " (beyond it in " + std::to_string(beyond) + " of " +
                      std::to_string(reported.size()) + " rounds): judged by the driver's clock.");
  }

  // The cores the worker's tree kept busy in its windows, over the case's threads: beyond the
  // margin, its calls did that much more work than their times show, and are judged so.
  const CpuAccount& a = e.yours_cpu;
  if (a.calls > 0 && a.threads > 0 && a.window_seconds > 0) {
    const bool outside = a.outside_seconds > kOutsideShare * a.cpu_seconds + kCpuSlackSeconds;
    const double cpu = a.cpu_seconds + (outside ? a.outside_seconds : 0);
    const double excess = cpu / (a.threads * a.window_seconds);
    if (excess > kCpuMargin && cpu > kCpuSlackSeconds) {
      // Its calls' time scaled by the cores it kept busy, or its CPU time per call and thread
      // (less the harness's overhead, as on the clock), whichever is more: the windows include the
      // freezing's own milliseconds, which dilute the first.
      const double overhead = std::max(0.0, e.harness_overhead);
      const double honest =
          std::max(g.seconds * excess, cpu / (a.threads * static_cast<double>(a.calls)) - overhead);
      g.flags.push_back(
          "your kernel's process kept " + format_fixed(cpu / a.window_seconds, 2) +
          " cores busy while it was timed, on a case of " + std::to_string(a.threads) +
          (a.threads == 1 ? " thread" : " threads") +
          (outside ? ", part of it between its timed batches: work done between calls"
                   : ": threads that go on working after a call returns, or spin, do work no "
                     "call's time shows") +
          ". Judged by that work: " + format_seconds(honest) + " per call.");
      g.seconds = honest;
    }
  }

  if (!e.fresh.empty()) {
    std::vector<double> yours_first, yours_repeat, reference_first, reference_repeat, excess,
        first_ratio;
    for (const Evidence::FreshSet& f : e.fresh) {
      const double yf = f.yours_first, yr = f.yours_repeat;
      const double rf = f.reference_first, rr = f.reference_repeat;
      if (!(yf > 0 && yr > 0 && rf > 0 && rr > 0)) continue;
      yours_first.push_back(yf);
      yours_repeat.push_back(yr);
      reference_first.push_back(rf);
      reference_repeat.push_back(rr);
      excess.push_back((yf / yr) / (rf / rr));
      first_ratio.push_back(yf / rf);
    }
    FreshInputs fresh{.sets = static_cast<int>(excess.size()),
                      .yours_first = median(yours_first),
                      .yours_repeat = median(yours_repeat),
                      .reference_first = median(reference_first),
                      .reference_repeat = median(reference_repeat)};
    g.fresh = fresh;
    // Every set must show it (a first call slowed by a neighbour shows in one set, a cache in
    // all), and the kernel is judged by its fastest first call.
    const double least_excess =
        excess.empty() ? 0 : *std::min_element(excess.begin(), excess.end());
    const double least_first =
        first_ratio.empty() ? 0 : *std::min_element(first_ratio.begin(), first_ratio.end());
    const double first = least_first * g.reference_seconds;
    if (excess.size() >= kFreshSetsToJudge && least_excess > kFreshMargin && first > g.seconds) {
      g.flags.push_back(
          "on inputs drawn afresh your first call took " + format_seconds(fresh.yours_first) +
          " and the calls after it " + format_seconds(fresh.yours_repeat) + " (the reference: " +
          format_seconds(fresh.reference_first) + " and " + format_seconds(fresh.reference_repeat) +
          "): your kernel is faster on inputs it has seen, it keeps results between calls. "
          "Judged by its first calls: " +
          format_ratio(least_first) + " the reference's.");
      g.seconds = first;
    }
  }
  g.ratio = g.reference_seconds > 0 ? g.seconds / g.reference_seconds : 0;
  return g;
}

std::optional<OutputDifference> compare_outputs(const OutputCheck& check,
                                                std::span<const std::byte> yours,
                                                std::span<const std::byte> reference,
                                                std::span<const float> scale) {
  const std::size_t bytes = size_of(check.element) * check.count;
  if (yours.size() < bytes || reference.size() < bytes ||
      (check.scaled && scale.size() < check.count))
    throw std::invalid_argument("compare_outputs: buffers smaller than the declared output");
  const float* s = check.scaled ? scale.data() : nullptr;
  switch (check.element) {
    case Element::f32:
      return compare_as(check, reinterpret_cast<const float*>(yours.data()),
                        reinterpret_cast<const float*>(reference.data()), s);
    case Element::i8:
      return compare_as(check, reinterpret_cast<const std::int8_t*>(yours.data()),
                        reinterpret_cast<const std::int8_t*>(reference.data()), s);
    case Element::i32:
      return compare_as(check, reinterpret_cast<const std::int32_t*>(yours.data()),
                        reinterpret_cast<const std::int32_t*>(reference.data()), s);
  }
  return std::nullopt;
}

std::string describe(const OutputCheck& check, const OutputDifference& d) {
  const std::string value =
      d.never_written ? "the poison (never written)" : show(d.yours, check.element);
  return "the output of a timed call differs from the reference's on the same inputs: element " +
         std::to_string(d.first) + " is " + value + ", expected " +
         show(d.reference, check.element) + " (difference allowed there: " +
         (d.allowed > 0 ? show(d.allowed, Element::f32) : std::string("none")) + "; " +
         std::to_string(d.differing) + " of " + std::to_string(check.count) +
         " elements differ). Your kernel skips or fakes work when timed: its output was right when "
         "checked in its own process, but the driver also compares the output of one timed call, "
         "chosen at random, with the reference's.";
}

Verdict judge(const DriverOptions& o, std::ostream& out) {
  Verdict v;
  v.lab = o.lab;
  v.case_name = o.case_name;
  v.edit = o.edit;
  v.seed = o.seed;
  v.base_seed = base_seed();
  v.max_ratio = o.max_ratio;
  v.results = (o.results / o.lab).string();
  v.ceilings_path = o.ceilings_path;
  auto finish = [&](Outcome outcome, Reason reason, std::string message) {
    v.outcome = outcome;
    v.reason = reason;
    v.message = std::move(message);
    return v;
  };

  const Progress progress = [&](const std::string& line) { out << "  ceilings: " << line << "\n"; };
  Ceilings ceilings;
  try {
    ceilings = o.load_ceilings ? o.load_ceilings(progress)
                               : load_or_measure_ceilings(o.ceilings_path, false, progress);
  } catch (const Skipped& e) {
    return finish(Outcome::skipped, Reason::skipped, e.what());
  }
  v.ceilings = ceilings;
  out << v.test() << "\n";

  // One measurement: a fresh pair of workers, set up in parallel, timed in alternation.
  struct Session {
    json ready;
    Summary student, reference, ratio;
    std::string ratio_note;
    int rounds = 0;
    std::vector<double> ratios;
    std::optional<TimedOutputCheck> output_check;
    std::vector<double> driver_seconds;
    std::vector<double> student_timed, reference_timed;  // the driver's clock, timed batches only
    std::string apart;                                   // how the workers were kept apart
    CpuAccount student_cpu, reference_cpu;
    // The first call on each fresh set of inputs, (reported, clock) seconds, and the median of the
    // round's batches after it (reported per call, clock per call), per worker.
    struct FreshSet {
      std::pair<double, double> yours_first, reference_first;
      int first_round = 0;
    };
    std::vector<FreshSet> fresh_sets;
    // Per round of the comparison, per worker: the median of the times it reported, and the
    // driver's clock per call of its two batches.
    std::vector<double> yours_round_reported, yours_round_clock;
    std::vector<double> reference_round_reported, reference_round_clock;
    double harness_overhead = 0;  // see Evidence
    struct ExtraTime {
      std::string label;
      Extra::Side side;
      Work work;
      Summary time;
    };
    std::vector<ExtraTime> extras;
  };
  bool reference_failed = false;
  // The session whose worker failed keeps what it found of the timed output (the verdict shows it).
  std::optional<TimedOutputCheck> failed_check;
  // Fresh inputs: set up again from a new seed in both workers, at rounds 0 and 1 (a comparison
  // runs two at least, and the first calls are judged on two sets at least) and then every third
  // round, at most kFreshSets times (each costs a set-up of the case, outside the timing).
  constexpr int kFreshSets = 4;
  auto fresh_round = [](int round) { return round <= 1 || (round - 1) % 3 == 0; };
  auto measure = [&]() -> Session {
    Session session;
    std::optional<Worker> student, reference;
    student.emplace("your " + o.case_name, o.student, o);
    if (!o.reference.empty()) reference.emplace("the reference " + o.case_name, o.reference, o);
    session.apart = student->apart_how();
    // Both set up at once; the reference is awaited first, so that its times tell how long the
    // student's steps should take (a worker far slower is stopped early, see
    // Worker::receive_batch).
    // (A reference that fails is reported after the student's own failure, if any: the student's
    // is what the student can fix.)
    json theirs;
    std::optional<WorkerFailure> reference_failure;
    if (reference) {
      student->judge_by(*reference);
      try {
        theirs = reference->await_ready();
      } catch (const WorkerFailure& e) {
        reference_failure = e;
      }
    }
    session.ready = student->await_ready();
    if (reference_failure) {
      reference_failed = true;
      throw *reference_failure;
    }
    const unsigned threads = session.ready.at("work").get<Work>().threads;
    if (reference) {
      auto same_case = [&](const json& mine, const json& their) {
        if (their.at("work") != mine.at("work") ||
            their.value("output", json()) != mine.value("output", json()))
          throw WorkerFailure(Reason::mismatch,
                              "the two workers describe different work or outputs for " +
                                  o.case_name +
                                  ": they were built from different perf cases. Rebuild.");
      };
      same_case(session.ready, theirs);
      // The check of a timed call: in one of the first two rounds (at least two run), one batch of
      // each worker, picked here where the code under test cannot see it.
      const std::optional<OutputCheck> check = output_check_of(theirs);
      std::mt19937_64 pick(std::random_device{}());
      const int checked_round = static_cast<int>(pick() % 2);
      const int mine = static_cast<int>(pick() % 2), their = static_cast<int>(pick() % 2);
      if (check) {
        const std::size_t bytes = output_bytes(check->element, check->count);
        const int slots = 2 + kFreshSets;
        student->reserve(bytes, slots);
        reference->reserve(bytes + (check->scaled ? sizeof(float) * check->count : 0), slots);
      }
      // Compares what both workers copied under `tag`, once both have; throws on a difference.
      auto compare_copies = [&](const std::string& tag, bool fresh_inputs) {
        const std::span<const std::byte> yours = student->copied(tag), ref = reference->copied(tag);
        if (!check || yours.empty() || ref.empty()) return;
        const std::size_t bytes = size_of(check->element) * check->count;
        const std::size_t scales_at = output_bytes(check->element, check->count);
        const std::span<const float> scales =
            check->scaled
                ? std::span<const float>(reinterpret_cast<const float*>(ref.data() + scales_at),
                                         check->count)
                : std::span<const float>();
        const std::optional<OutputDifference> d =
            compare_outputs(*check, yours.first(bytes), ref.first(bytes), scales);
        TimedOutputCheck found{.checked = true,
                               .elements = check->count,
                               .student_batch = student->checked_batch(tag),
                               .reference_batch = reference->checked_batch(tag),
                               .differing = d ? d->differing : 0};
        student->drop_copy(tag);
        reference->drop_copy(tag);
        if (!session.output_check || d) session.output_check = found;
        if (d) {
          session.output_check->first = d->first;
          session.output_check->yours = d->yours;
          session.output_check->expected = d->reference;
          failed_check = session.output_check;
          throw WorkerFailure(
              Reason::timed_output_differs,
              describe(*check, *d) + (fresh_inputs
                                          ? " That call was the first on inputs drawn afresh: a "
                                            "result kept from earlier inputs is not theirs."
                                          : ""));
        }
      };
      // New inputs in both workers (set up at the same time, free), then the first call of each on
      // them, timed apart and checked.
      auto fresh_set = [&](int round) {
        const std::uint64_t seed = pick();
        student->keep_apart(false);
        reference->keep_apart(false);
        student->fresh(seed);
        reference->fresh(seed);
        json theirs_again;
        try {
          theirs_again = reference->await_ready();
        } catch (const WorkerFailure&) {
          reference_failed = true;
          throw;
        }
        // Wrong on new inputs after it was right before the timing began: the kernel tells the
        // timed calls apart (the same buffer again, say) and does less work on them.
        const json again = [&] {
          try {
            return student->await_ready();
          } catch (const WorkerFailure& e) {
            if (e.reason != Reason::wrong) throw;
            throw WorkerFailure(
                Reason::timed_output_differs,
                std::string(e.what()) +
                    "\nThat was its first call on inputs drawn afresh between timed batches; on "
                    "the first inputs it was right. Your kernel skips or fakes work when timed: "
                    "it must compute every call in full, whatever it was called with before.");
          }
        }();
        same_case(again, theirs_again);
        student->keep_apart(true);
        reference->keep_apart(true);
        const std::string tag = "fresh" + std::to_string(session.fresh_sets.size());
        Session::FreshSet set;
        set.first_round = round;
        set.yours_first = student->first_call(check.has_value(), false, tag);
        set.reference_first = reference->first_call(check.has_value(), check && check->scaled, tag);
        session.fresh_sets.push_back(set);
        compare_copies(tag, true);
      };
      student->keep_apart(true);
      reference->keep_apart(true);
      const double limit = o.max_ratio;
      const Comparison c = compare_interleaved(
          student->runner(), reference->runner(), o.timing,
          [limit](const Comparison& c) {
            // The verdict is clear once the middle half of the rounds sits well on one side of
            // the limit.
            return c.rounds >= 3 && (c.ratio.q1 > 1.05 * limit || c.ratio.q3 < limit / 1.05);
          },
          [&](int round) {
            compare_copies("timed", false);
            if (fresh_round(round) && static_cast<int>(session.fresh_sets.size()) < kFreshSets)
              fresh_set(round);
            if (check && round == checked_round) {
              student->arm(mine, false, "timed");
              reference->arm(their, check->scaled, "timed");
            }
          });
      session.student_cpu = student->account;
      session.reference_cpu = reference->account;
      student->keep_apart(false);
      reference->keep_apart(false);
      if (check) {
        if (student->checked_batch("timed") < 0) student->check_one_more(false, "timed");
        if (reference->checked_batch("timed") < 0)
          reference->check_one_more(check->scaled, "timed");
        compare_copies("timed", false);
        student->seal();
        if (session.output_check) {
          session.output_check->student_batch = student->checked_batch("timed");
          session.output_check->reference_batch = reference->checked_batch("timed");
        }
      } else {
        session.output_check =
            TimedOutputCheck{.checked = false, .why = "the perf case declares no output"};
      }
      session.student = c.a.summary;
      session.reference = c.b.summary;
      session.ratio = c.ratio;
      session.ratio_note = "over " + std::to_string(c.rounds) + " interleaved rounds, quartiles " +
                           format_ratio(c.ratio.q1) + " to " + format_ratio(c.ratio.q3);
      session.rounds = c.rounds;
      session.ratios = c.ratios;
      auto per_round = [&](const Timing& t, const std::vector<double>& clock,
                           std::vector<double>& reported, std::vector<double>& clocked) {
        const std::size_t runs = t.seconds.size() / static_cast<std::size_t>(c.rounds);
        for (int r = 0; r < c.rounds; ++r) {
          const auto first = t.seconds.begin() + static_cast<std::ptrdiff_t>(r * runs);
          reported.push_back(
              summarize(std::vector<double>(first, first + static_cast<std::ptrdiff_t>(runs)))
                  .median);
          // Two batches per round after the warm-up's (one batch per warm-up run).
          const std::size_t k = static_cast<std::size_t>(t.warmup_runs + 2 * r);
          clocked.push_back(k + 1 < clock.size() ? (clock[k] + clock[k + 1]) / 2 : 0);
        }
      };
      per_round(c.a, student->driver_seconds, session.yours_round_reported,
                session.yours_round_clock);
      per_round(c.b, reference->driver_seconds, session.reference_round_reported,
                session.reference_round_clock);
      // The harness's overhead per call: the least, over the reference's timed batches (two per
      // round, after its warm-up batches), of its clock per call less its reported median.
      {
        const std::size_t per_batch = c.b.seconds.size() / static_cast<std::size_t>(2 * c.rounds);
        std::vector<double> overheads;
        for (std::size_t k = 0; per_batch > 0 && k < static_cast<std::size_t>(2 * c.rounds); ++k) {
          const std::size_t at = static_cast<std::size_t>(c.b.warmup_runs) + k;
          if (at >= reference->driver_seconds.size() ||
              static_cast<int>(k) + c.b.warmup_runs == reference->checked_batch("timed"))
            continue;
          const auto first = c.b.seconds.begin() + static_cast<std::ptrdiff_t>(k * per_batch);
          overheads.push_back(
              reference->driver_seconds[at] -
              summarize(std::vector<double>(first, first + static_cast<std::ptrdiff_t>(per_batch)))
                  .median);
        }
        if (!overheads.empty())
          session.harness_overhead = *std::min_element(overheads.begin(), overheads.end());
      }
      session.student_timed =
          timed_batches(student->driver_seconds, c.a.warmup_runs, student->checked_batch("timed"));
      session.reference_timed = timed_batches(reference->driver_seconds, c.b.warmup_runs,
                                              reference->checked_batch("timed"));
      reference->request_verify();
      student->request_verify();
      failed_check = session.output_check;
      try {
        reference->await_verify();
      } catch (const WorkerFailure&) {
        reference_failed = true;
        throw;
      }
    } else {
      session.output_check =
          TimedOutputCheck{.checked = false, .why = "no reference worker here (profile mode)"};
      failed_check = session.output_check;
      student->keep_apart(true);
      const Timing t = time_runs(student->runner(), o.timing);
      session.student_cpu = student->account;
      student->keep_apart(false);
      session.student = t.summary;
      session.student_timed = timed_batches(student->driver_seconds, t.warmup_runs, -1);
      student->request_verify();
    }
    session.student_cpu.threads = session.reference_cpu.threads = threads;
    student->await_verify();
    session.driver_seconds = student->driver_seconds;
    // Extras: library baselines in the reference's worker when there is one, variants of the
    // student's kernel in the student's.
    const json& extras = session.ready.at("extras");
    for (std::size_t k = 0; k < extras.size(); ++k) {
      const Extra::Side side =
          extras[k].at("side") == "library" ? Extra::Side::library : Extra::Side::yours;
      Worker& where = side == Extra::Side::library && reference ? *reference : *student;
      session.extras.push_back({extras[k].at("label").get<std::string>(), side,
                                extras[k].at("work").get<Work>(),
                                time_runs(where.runner(static_cast<int>(k)), o.timing).summary});
    }
    return session;
  };

  Session session;
  try {
    session = measure();
    // A shared machine can slow one process for its whole life (where its memory landed, a
    // neighbour): before calling a kernel too slow, measure again with a fresh pair of processes.
    if (!o.reference.empty() && session.ratio.median > o.max_ratio) {
      out << "  " << format_fixed(session.ratio.median, 2)
          << "x the reference's time: confirming with a fresh pair of processes ...\n";
      failed_check.reset();
      Session again = measure();
      v.first_attempt_ratio = session.ratio.median;
      if (again.ratio.median < session.ratio.median) session = std::move(again);
    }
  } catch (const WorkerFailure& e) {
    v.output_check = failed_check;
    if (e.reason ==
        Reason::skipped)  // nothing to run on here: not a failure, and not a pass either
      return finish(Outcome::skipped, Reason::skipped, e.what());
    if (reference_failed) return finish(Outcome::error, Reason::reference_failed, e.what());
    if (e.reason == Reason::mismatch) return finish(Outcome::error, Reason::mismatch, e.what());
    return finish(Outcome::fail, e.reason, e.what());
  }
  const json& ready = session.ready;
  const Work work = ready.at("work").get<Work>();
  const std::vector<Hint> hints = ready.at("hints").get<std::vector<Hint>>();
  v.function = ready.value("function", o.case_name);
  v.description = ready.value("description", "");
  v.work = work;
  v.rounds = session.rounds;
  v.ratios = session.ratios;
  v.output_check = session.output_check;
  const Analysis mine = analyze(work, session.student.median, ceilings);
  v.student = Side{.timing = session.student,
                   .analysis = mine,
                   .driver_seconds = session.driver_seconds,
                   .driver_timed_seconds = session.student_timed};

  if (!o.record_profile.empty()) {
    record_profile(o.record_profile, o.lab, o.case_name, mine, ceilings);
    v.profile = ProfileUse{.path = o.record_profile, .fraction_of_roof = mine.fraction_of_roof};
    return finish(Outcome::recorded, Reason::profile, "");
  }

  Summary reference_time = session.reference, ratio = session.ratio;
  v.reference_label = "reference";
  v.ratio_note = session.ratio_note;
  if (o.reference.empty()) {
    // No reference here: expect the time at the reference's recorded fraction of the roofline.
    double fraction = 0;
    try {
      fraction = profile_fraction(o.profile, o.case_name);
    } catch (const std::exception& e) {
      return finish(Outcome::error, Reason::profile, e.what());
    }
    const double expected = roofline_seconds(work, ceilings) / fraction;
    reference_time = Summary{.count = 1,
                             .min = expected,
                             .q1 = expected,
                             .median = expected,
                             .q3 = expected,
                             .max = expected,
                             .mean = expected,
                             .stddev = 0};
    ratio = session.student;
    for (double* x :
         {&ratio.min, &ratio.q1, &ratio.median, &ratio.q3, &ratio.max, &ratio.mean, &ratio.stddev})
      *x /= expected;
    v.reference_label = "reference (expected)";
    v.ratio_note = "against the reference's recorded " + format_percent(fraction) +
                   " of the roofline, from " + o.profile;
    v.profile = ProfileUse{.path = o.profile, .fraction_of_roof = fraction};
  }
  v.reference = Side{.timing = reference_time,
                     .analysis = analyze(work, reference_time.median, ceilings),
                     .driver_timed_seconds = session.reference_timed,
                     .expected_from_profile = o.reference.empty()};
  v.ratio = ratio;

  // The driver's own clock: medians of the timed batches (the reference's expected time without
  // one).
  DriverClock clock;
  clock.yours = session.student_timed.empty() ? 0 : summarize(session.student_timed).median;
  clock.reference =
      o.reference.empty()
          ? reference_time.median
          : (session.reference_timed.empty() ? 0 : summarize(session.reference_timed).median);
  if (clock.yours > 0 && clock.reference > 0 && std::isfinite(clock.reference)) {
    clock.ratio = clock.yours / clock.reference;
    clock.analysis = analyze(work, clock.yours, ceilings);
  }
  v.clock = clock;
  // Without a reference worker there is no measure of the harness's own overhead to take off the
  // clock (and no grade: profile mode is the student kit's), so its report stands.
  Evidence evidence{.yours_reported = session.student.median,
                    .yours_clock = o.reference.empty() ? 0 : clock.yours,
                    .reference_reported = reference_time.median,
                    .harness_overhead = session.harness_overhead,
                    .apart = session.apart,
                    .yours_cpu = session.student_cpu,
                    .reference_cpu = session.reference_cpu};
  for (std::size_t r = 0;
       r < session.yours_round_clock.size() && r < session.reference_round_clock.size(); ++r)
    evidence.rounds.push_back({.yours_reported = session.yours_round_reported[r],
                               .yours_clock = session.yours_round_clock[r],
                               .reference_reported = session.reference_round_reported[r],
                               .reference_clock = session.reference_round_clock[r]});
  for (const Session::FreshSet& f : session.fresh_sets) {
    const auto r = static_cast<std::size_t>(f.first_round);
    if (r >= session.yours_round_reported.size() || r >= session.reference_round_reported.size())
      continue;
    evidence.fresh.push_back({.yours_first = f.yours_first.first,
                              .yours_repeat = session.yours_round_reported[r],
                              .reference_first = f.reference_first.first,
                              .reference_repeat = session.reference_round_reported[r]});
  }
  v.graded = grade(evidence);
  const double judged = v.graded->ratio;

  const double yours = session.student.median;
  if (ready.contains("per_item")) {
    const double items = ready["per_item"].at("items").get<double>();
    const std::string item = ready["per_item"].at("item").get<std::string>();
    v.per_item = PerItem{.items = items,
                         .item = item,
                         .student_seconds = yours / items,
                         .reference_seconds = reference_time.median / items};
    v.notes.push_back("Per " + item + " (" + format_fixed(items, 0) + " per call): yours " +
                      format_seconds(yours / items) + ", " + v.reference_label + " " +
                      format_seconds(reference_time.median / items) + ".");
  }
  for (const auto& e : session.extras) {
    ExtraResult x{.label = e.label,
                  .timing = e.time,
                  .analysis = analyze(e.work, e.time.median, ceilings),
                  .time_over_yours = e.time.median / yours};
    if (is_one_thread_run(work, e.side, e.work)) {
      x.speedup = e.time.median / yours;
      x.parallel_efficiency = *x.speedup / work.threads;
      v.notes.push_back("Yours: " + speedup_note(e.time.median, yours, work.threads) +
                        " (against " + e.label + ").");
    }
    v.extras.push_back(std::move(x));
  }
  v.next = next_step(mine, hints);
  if (auto note = fresh_memory_note(v.function, work, session.student_cpu, session.reference_cpu))
    v.next = std::move(*note);

  if (judged <= o.max_ratio) return finish(Outcome::pass, Reason::ok, "");
  if (o.explain_slow && mine.fraction_of_roof < 0.5)
    for (std::string& line : o.explain_slow()) v.notes.push_back(std::move(line));
  return finish(Outcome::fail, Reason::too_slow,
                "your " + v.function + " takes " + format_ratio(judged) +
                    " the reference's time; within " + format_fixed(o.max_ratio, 2) + "x passes.");
}

std::optional<std::string> fresh_memory_note(const std::string& function, const Work& work,
                                             const CpuAccount& yours, const CpuAccount& reference) {
  // A megabyte a call at least, a tenth of the bytes the work moves, and four times the
  // reference's: a buffer the size of the data, not a few pages of bookkeeping.
  static const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  const double pages = yours.pages_per_call(), theirs = reference.pages_per_call();
  const double bytes = pages * page;
  if (yours.faulted_calls == 0 || bytes < (1 << 20) || bytes < 0.1 * work.bytes) return {};
  if (reference.faulted_calls > 0 && pages < 4 * theirs + 256) return {};
  const std::string size = bytes >= (1 << 30) ? format_fixed(bytes / (1 << 30), 1) + " GiB"
                                              : format_fixed(bytes / (1 << 20), 0) + " MiB";
  std::string text = "Each call of your " + function + " touched " + format_fixed(pages, 0) +
                     " pages of memory it had not touched before (" + size;
  if (work.bytes > 0)
    text += ", " + format_fixed(100 * bytes / work.bytes, 0) + "% of the bytes the work moves";
  if (reference.faulted_calls > 0) text += "; the reference's call, " + format_fixed(theirs, 0);
  return text +
         "): it allocates memory on every call (a std::vector, a copy of an input, a buffer made "
         "inside the function), and each new page costs a page fault and a pass to fill it. Work "
         "in the buffers the caller passes, or allocate once, outside the timed call.";
}

std::string stalled_reading(double cpu_per_second, double switches_per_second) {
  if (cpu_per_second < 0.05)
    return "it was asleep, waiting for something that never came: a lost wake-up, a deadlock, or "
           "a thread joined that never ends";
  if (switches_per_second > 2000)
    return "it was working, but its threads handed the CPU to each other thousands of times a "
           "second: tasks far too small for what each costs (a lock, a wake-up, a queue entry), "
           "or threads taking turns at one lock. Give each task thousands of elements, and hold "
           "no lock while working";
  return "it was running flat out: a loop that never ends, or far more work than the case needs "
         "(a loop over the wrong bounds, an algorithm of a higher order)";
}

Verdict drive(const DriverOptions& o, std::ostream& out) {
  const Verdict v = judge(o, out);
  write_results(v);
  print(v, out);
  return v;
}

}  // namespace workbook::perf
