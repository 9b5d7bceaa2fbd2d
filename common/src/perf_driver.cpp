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
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::perf {
namespace {

using nlohmann::json;

// Why a worker could not be timed: the verdict's reason.
struct WorkerFailure : std::runtime_error {
  WorkerFailure(Reason reason, const std::string& message)
      : std::runtime_error(message), reason(reason) {}
  Reason reason;
};

// A read-only view of a worker's shared memory, unmapped when it goes.
class Mapping {
 public:
  Mapping(int fd, std::size_t bytes) : bytes_(bytes) {
    if (bytes_ == 0) return;
    void* p = mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
      throw std::runtime_error(std::string("mapping a worker's output: ") + std::strerror(errno));
    data_ = static_cast<const std::byte*>(p);
  }
  ~Mapping() {
    if (data_ != nullptr) munmap(const_cast<std::byte*>(data_), bytes_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::span<const std::byte> bytes(std::size_t offset, std::size_t size) const {
    return {data_ + offset, size};
  }

 private:
  const std::byte* data_ = nullptr;
  std::size_t bytes_;
};

// One worker process running one perf case, spoken to in JSON lines, with a shared memory of its
// own (fd 5 in the worker) into which it copies the output of the batch the driver checks.
class Worker {
 public:
  Worker(std::string who, const std::string& executable, const DriverOptions& o)
      : who_(std::move(who)), timeout_(o.timeout_seconds) {
    memfd_ = memfd_create("workbook-perf-output", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memfd_ < 0)
      throw std::runtime_error(std::string("shared memory for a perf worker: ") +
                               std::strerror(errno));
    process_ = std::make_unique<Subprocess>(Subprocess::Options{
        .argv = {executable, "--worker", "--case", o.case_name, "--seed", std::to_string(o.seed)},
        .channel = true,
        .environment = std::nullopt,
        .extra_fds = {memfd_}});
  }
  // A worker keeps nothing worth saving: when the driver is done (or gives up), it is killed.
  ~Worker() {
    process_.reset();
    close(memfd_);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Room for the output (and the reference's scales) in the shared memory.
  void reserve(std::size_t bytes) {
    if (ftruncate(memfd_, static_cast<off_t>(bytes)) != 0)
      throw std::runtime_error(std::string("sizing a perf worker's shared memory: ") +
                               std::strerror(errno));
    shared_bytes_ = bytes;
  }
  // The kernel's `k`-th batch from now (0: the next) is checked: poisoned first, its output copied
  // to the shared memory after (and the scales, when `with_scale`).
  void arm(int k, bool with_scale) {
    armed_ = k;
    with_scale_ = with_scale;
  }
  // The number of the kernel's batch that was checked (warm-up included), or -1.
  int checked_batch() const { return checked_batch_; }
  // A batch of one call, checked, outside the timing: when the comparison ended before the batch
  // chosen to be checked.
  void check_one_more(bool with_scale) {
    arm(0, with_scale);
    run_kernel(1);
  }
  Mapping map() const { return Mapping(memfd_, shared_bytes_); }

  // The case's own description, once the worker has checked the kernel and is ready to time it.
  json await_ready() {
    json m = receive("setting up and checking");
    const std::string type = m.value("type", "");
    if (type == "ready") return m;
    if (type == "not_implemented")
      throw WorkerFailure(Reason::not_implemented, m.at("message").get<std::string>());
    if (type == "skipped") throw WorkerFailure(Reason::skipped, m.at("message").get<std::string>());
    if (type == "wrong")
      throw WorkerFailure(Reason::wrong,
                          who_ + " gives wrong results, so its speed is not measured:\n" +
                              m.at("report").get<std::string>());
    throw WorkerFailure(Reason::worker_error, who_ + ": " + m.value("message", m.dump()));
  }

  // Runs `count` timed calls in the worker (of the kernel, or of extra number `extra`). Also keeps
  // the driver's own clock of each batch, which code under test cannot forge (it includes the
  // channel's round trip, microseconds).
  BatchRunner runner(int extra = -1) {
    return [this, extra](int count) {
      const auto start = std::chrono::steady_clock::now();
      json m = extra < 0 ? run_kernel(count) : run_extra(extra, count);
      const double round_trip =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (extra < 0) driver_seconds.push_back(round_trip / count);
      return m.at("seconds").get<std::vector<double>>();
    };
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

 private:
  json run_kernel(int count) {
    const int batch = batches_++;
    const bool checked = armed_ == 0;
    if (armed_ >= 0) --armed_;
    json command = {{"cmd", "run"}, {"count", count}};
    if (checked) command.update({{"snapshot", true}, {"scale", with_scale_}});
    send(command);
    json m = receive("running");
    if (m.value("type", "") != "times")
      throw WorkerFailure(Reason::worker_error,
                          who_ + " failed while timed: " + m.value("message", m.dump()));
    if (checked) {
      if (!m.value("snapshot", false))
        throw WorkerFailure(Reason::worker_error, who_ + " did not copy its output as asked");
      // Frozen as it is now: the worker keeps its descriptor, but can write no more. Sealing fails
      // while a writable mapping remains, which the harness's copy does not leave.
      if (fcntl(memfd_, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        throw WorkerFailure(
            Reason::output_tampered,
            who_ +
                " kept the shared memory of its output mapped for writing after copying "
                "the output of a timed call (" +
                std::strerror(errno) +
                "): code in your kernel's process could change the output after the "
                "check. Your kernel must not touch the harness's descriptors.");
      checked_batch_ = batch;
    }
    return m;
  }
  json run_extra(int extra, int count) {
    send(json{{"cmd", "run_extra"}, {"index", extra}, {"count", count}});
    json m = receive("running");
    if (m.value("type", "") != "times")
      throw WorkerFailure(Reason::worker_error,
                          who_ + " failed while timed: " + m.value("message", m.dump()));
    return m;
  }
  void send(const json& m) {
    if (!process_->send(m.dump())) throw died("while receiving a command");
  }
  json receive(const std::string& doing) {
    std::string line;
    switch (process_->read_line(line, timeout_)) {
      case Subprocess::Read::line:
        try {
          return json::parse(line);
        } catch (const json::exception&) {
          throw WorkerFailure(Reason::worker_error, who_ + " sent a malformed reply: " + line);
        }
      case Subprocess::Read::timeout:
        process_->kill();
        throw WorkerFailure(Reason::timeout, who_ + " did not answer within " +
                                                 format_fixed(timeout_, 0) + " s while " + doing +
                                                 ": an endless loop, or far too slow");
      case Subprocess::Read::end:
        break;
    }
    throw died("while " + doing);
  }
  WorkerFailure died(const std::string& doing) {
    const auto exit = process_->wait(10);
    return WorkerFailure(
        Reason::crashed,
        who_ + " crashed " + doing + " (" +
            (exit ? exit->describe() : std::string("no exit status")) +
            "). Run the correctness tests first; a crash there is easier to debug.");
  }

  std::string who_;
  double timeout_;
  int memfd_ = -1;
  std::size_t shared_bytes_ = 0;
  int armed_ = -1, batches_ = 0, checked_batch_ = -1;
  bool with_scale_ = false;
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
                   "`cmake --workflow --preset bench`. The student kit has no solutions: "
                   "its perf tests expect the reference's time to be the roofline time / "
                   "fraction on the student's own machine."},
                  {"cases", json::object()}};
  if (std::ifstream in(path); in) profile = json::parse(in);
  profile["cases"][case_name] = {
      {"fraction_of_roof", a.fraction_of_roof},
      {"bound", to_string(a.bound)},
      {"seconds", a.seconds},
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
  auto measure = [&]() -> Session {
    Session session;
    std::optional<Worker> student, reference;
    student.emplace("your " + o.case_name, o.student, o);
    if (!o.reference.empty()) reference.emplace("the reference " + o.case_name, o.reference, o);
    session.ready = student->await_ready();
    if (reference) {
      json theirs;
      try {
        theirs = reference->await_ready();
      } catch (const WorkerFailure&) {
        reference_failed = true;
        throw;
      }
      if (theirs.at("work") != session.ready.at("work") ||
          theirs.value("output", json()) != session.ready.value("output", json()))
        throw WorkerFailure(Reason::mismatch,
                            "the two workers describe different work or outputs for " +
                                o.case_name +
                                ": they were built from different perf cases. Rebuild.");
      // The check of a timed call: in one of the first two rounds (at least two run), one batch of
      // each worker, picked here where the code under test cannot see it.
      const std::optional<OutputCheck> check = output_check_of(theirs);
      std::mt19937 pick(std::random_device{}());
      const int checked_round = static_cast<int>(pick() % 2);
      const int mine = static_cast<int>(pick() % 2), their = static_cast<int>(pick() % 2);
      if (check) {
        const std::size_t bytes = output_bytes(check->element, check->count);
        student->reserve(bytes);
        reference->reserve(bytes + (check->scaled ? sizeof(float) * check->count : 0));
      }
      const double limit = o.max_ratio;
      const Comparison c = compare_interleaved(
          student->runner(), reference->runner(), o.timing,
          [limit](const Comparison& c) {
            // The verdict is clear once the middle half of the rounds sits well on one side of
            // the limit.
            return c.rounds >= 3 && (c.ratio.q1 > 1.05 * limit || c.ratio.q3 < limit / 1.05);
          },
          [&](int round) {
            if (check && round == checked_round) {
              student->arm(mine, false);
              reference->arm(their, check->scaled);
            }
          });
      if (check) {
        if (student->checked_batch() < 0) student->check_one_more(false);
        if (reference->checked_batch() < 0) reference->check_one_more(check->scaled);
        const Mapping yours = student->map(), ref = reference->map();
        const std::size_t bytes = size_of(check->element) * check->count;
        const std::span<const std::byte> scales =
            check->scaled ? ref.bytes(output_bytes(check->element, check->count),
                                      sizeof(float) * check->count)
                          : std::span<const std::byte>();
        const std::optional<OutputDifference> d = compare_outputs(
            *check, yours.bytes(0, bytes), ref.bytes(0, bytes),
            {reinterpret_cast<const float*>(scales.data()), scales.size() / sizeof(float)});
        session.output_check = TimedOutputCheck{.checked = true,
                                                .elements = check->count,
                                                .student_batch = student->checked_batch(),
                                                .reference_batch = reference->checked_batch(),
                                                .differing = d ? d->differing : 0};
        if (d) {
          session.output_check->first = d->first;
          session.output_check->yours = d->yours;
          session.output_check->expected = d->reference;
          failed_check = session.output_check;
          throw WorkerFailure(Reason::timed_output_differs, describe(*check, *d));
        }
      } else {
        session.output_check =
            TimedOutputCheck{.checked = false, .why = "the perf case declares no output"};
      }
      session.student = c.a.summary;
      session.reference = c.b.summary;
      session.ratio = c.ratio;
      session.ratio_note = "over " + std::to_string(c.rounds) + " interleaved rounds, quartiles " +
                           format_fixed(c.ratio.q1, 2) + "x to " + format_fixed(c.ratio.q3, 2) +
                           "x";
      session.rounds = c.rounds;
      session.ratios = c.ratios;
      session.student_timed =
          timed_batches(student->driver_seconds, c.a.warmup_runs, student->checked_batch());
      session.reference_timed =
          timed_batches(reference->driver_seconds, c.b.warmup_runs, reference->checked_batch());
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
      const Timing t = time_runs(student->runner(), o.timing);
      session.student = t.summary;
      session.student_timed = timed_batches(student->driver_seconds, t.warmup_runs, -1);
      student->request_verify();
    }
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

  if (ratio.median <= o.max_ratio) return finish(Outcome::pass, Reason::ok, "");
  return finish(Outcome::fail, Reason::too_slow,
                "your " + v.function + " takes " + format_fixed(ratio.median, 2) +
                    "x the reference's time; within " + format_fixed(o.max_ratio, 2) + "x passes.");
}

Verdict drive(const DriverOptions& o, std::ostream& out) {
  const Verdict v = judge(o, out);
  write_results(v);
  print(v, out);
  return v;
}

}  // namespace workbook::perf
