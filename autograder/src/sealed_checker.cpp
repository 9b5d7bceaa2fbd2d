// The checker's side of sealed tests: shared memory, the worker process, calls with a timeout.
#include <grade/sealed.hpp>

#include <grade/sandbox.hpp>
#include <grade/util.hpp>

#include <workbook/report.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::sealed {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The grader's machine failed (an isolation layer it supports could not be set up): not a test
// failure of the student's. The grader reads the exit code and reports an environment error.
[[noreturn]] void machine_failed(const std::exception& e) {
  std::fprintf(stderr, "sealed checker: %s\n", e.what());
  std::fflush(stderr);
  _exit(grade::kEnvironmentErrorExit);
}

// "relu=1.5,dot=2": seconds per call.
std::map<std::string, double> parse_deadlines(const std::string& text) {
  std::map<std::string, double> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const auto eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = std::stod(item.substr(eq + 1));
    start = end + 1;
  }
  return out;
}

// WORKBOOK_SEALED_PROGRESS=FILE: a line of JSON per finished test, written as it ends, so that the
// grader knows which tests ran when it had to stop the checker (the lab's time budget) before
// GoogleTest wrote its report.
class Progress : public ::testing::EmptyTestEventListener {
 public:
  explicit Progress(std::string file) : file_(std::move(file)) {}
  void OnTestEnd(const ::testing::TestInfo& t) override {
    const ::testing::TestResult& r = *t.result();
    std::string failures;
    for (int i = 0; i < r.total_part_count(); ++i)
      if (r.GetTestPartResult(i).failed())
        failures += std::string(r.GetTestPartResult(i).message()) + "\n";
    const std::string result = r.Skipped() ? "skipped" : r.Failed() ? "failed" : "passed";
    std::ofstream out(file_, std::ios::app);
    out << grade::valid_json(json{{"test", std::string(t.test_suite_name()) + "." + t.name()},
                                  {"result", result},
                                  {"failures", failures}})
               .dump()
        << "\n";
  }

 private:
  std::string file_;
};

const bool progress_registered = [] {
  const std::string file = env_or("WORKBOOK_SEALED_PROGRESS", "");
  if (!file.empty()) ::testing::UnitTest::GetInstance()->listeners().Append(new Progress(file));
  return true;
}();

}  // namespace

Worker::Worker(std::size_t capacity_bytes) : capacity_(capacity_bytes) {
  memfd_ = memfd_create("workbook-sealed", MFD_CLOEXEC);
  if (memfd_ < 0 || ftruncate(memfd_, static_cast<off_t>(capacity_)) != 0)
    throw std::runtime_error(std::string("shared memory for the sealed worker: ") +
                             std::strerror(errno));
  void* p = mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
  base_ = static_cast<std::byte*>(p);
  timeout_ = std::stod(env_or("WORKBOOK_SEALED_TIMEOUT", "30"));
  deadlines_ = parse_deadlines(env_or("WORKBOOK_SEALED_DEADLINES", ""));
  times_file_ = env_or("WORKBOOK_SEALED_TIMES", "");
  try {
    start();
  } catch (const grade::EnvironmentError& e) {
    machine_failed(e);
  }
}

Worker::~Worker() {
  if (to_worker_ >= 0) close(to_worker_);  // end of commands: the worker returns from main
  if (process_) {
    try {
      process_->finish(2.0);
    } catch (const grade::EnvironmentError& e) {
      machine_failed(e);
    }
  }
  if (from_worker_ >= 0) close(from_worker_);
  if (base_) munmap(base_, capacity_);
  if (memfd_ >= 0) close(memfd_);
}

void Worker::start() {
  const std::string worker = env_or("WORKBOOK_SEALED_WORKER", "");
  if (worker.empty())
    throw std::runtime_error(
        "WORKBOOK_SEALED_WORKER is not set: run sealed tests through the autograder or ctest");
  grade::SandboxSpec spec;
  const std::string sandbox = env_or("WORKBOOK_SEALED_SANDBOX", "");
  if (!sandbox.empty()) {
    spec = grade::spec_from_json(grade::read_json(sandbox));
  } else {
    // The project's own CI runs the reference and the stub this way: limits only, no isolation.
    // A GPU lab's worker is a CUDA program (its memory limit then spares the driver's
    // reservations).
    spec.isolate = false;
    spec.gpu = env_or("WORKBOOK_SEALED_GPU", "0") == "1";
    spec.env = grade::clean_environment();
    spec.cwd = "/";
  }
  spec.argv = {worker};
  spec.limits.wall_seconds =
      std::max(spec.limits.wall_seconds, 50 * timeout_);  // calls time out on their own
  int commands[2], replies[2];
  if (pipe2(commands, O_CLOEXEC) != 0 || pipe2(replies, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  spec.pass_fds = {commands[0], replies[1], fcntl(memfd_, F_DUPFD_CLOEXEC, 0)};
  process_ = std::make_unique<grade::SandboxProcess>(spec);
  to_worker_ = commands[1];
  from_worker_ = replies[0];
}

std::size_t Worker::reserve(std::size_t bytes) {
  const std::size_t offset = (used_ + 63) / 64 * 64;
  if (offset + bytes > capacity_)
    throw std::length_error("sealed worker: the shared memory (" + std::to_string(capacity_ >> 20) +
                            " MiB) is full");
  used_ = offset + bytes;
  return offset;
}

std::string Worker::ended(const std::string& doing) {
  if (!dead_.empty()) return dead_;
  grade::RunResult r;
  try {
    r = process_->finish(5.0);
  } catch (const grade::EnvironmentError& e) {
    machine_failed(e);
  }
  output_ = grade::valid_text(r.output_with_note());
  dead_ = "the worker running your code " + r.describe() + " while " + doing;
  // Valid text: GoogleTest's report of this failure is JSON the grader must be able to read.
  if (!r.output.empty()) dead_ += ". It printed:\n" + grade::valid_text(r.output.substr(0, 2000));
  return dead_;
}

std::string Worker::output() {
  return output_;
}

Reply Worker::call(const std::string& function, const std::vector<Arg>& args) {
  Reply reply;
  if (!dead_.empty()) {
    reply.kind = "crashed";
    reply.message = dead_ + " (an earlier call)";
    return reply;
  }
  json list = json::array();
  for (const Arg& a : args) {
    if (a.is_buffer) {
      if (a.output && a.poison) a.poison();
      list.push_back({{"buffer", {a.offset, a.count, a.type}}});
    } else {
      list.push_back({{"number", a.number}});
    }
  }
  const std::string line = json{{"fn", function}, {"args", list}}.dump() + "\n";
  const std::string doing = "running " + function;
  if (write(to_worker_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    reply.kind = "crashed";
    reply.message = ended(doing);
    return reply;
  }
  // A function the reference runs fast gets a deadline from its time (slow code fails its own
  // tests in seconds instead of holding the whole lab's budget); others the blanket timeout.
  const auto known = deadlines_.find(function);
  const double limit = known != deadlines_.end() ? std::min(timeout_, known->second) : timeout_;
  const auto called = Clock::now();
  const auto deadline = called + std::chrono::duration<double>(limit);
  std::string answer;
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      answer = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      process_->kill();
      ended(doing);
      dead_ = function + " did not return within " +
              workbook::format_fixed(limit, limit < 10 ? 1 : 0) + " s" +
              (known != deadlines_.end()
                   ? " (" + workbook::format_fixed(kCallDeadlineFactor, 0) +
                         " times the reference's slowest call, at least " +
                         workbook::format_fixed(kCallDeadlineFloorSeconds, 0) + " s)"
                   : std::string()) +
              ": an endless loop, or far too slow for these inputs";
      reply.kind = "timeout";
      reply.message = dead_;
      return reply;
    }
    pollfd p{from_worker_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(from_worker_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      reply.kind = "crashed";
      reply.message = ended(doing);
      return reply;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
    if (buffer_.size() > (1u << 20)) {
      // A reply is a short line: anything longer is the worker misbehaving, not an answer.
      process_->kill();
      ended(doing);
      dead_ = "the worker sent more than 1 MiB on the reply channel while running " + function;
      reply.kind = "protocol";
      reply.message = dead_;
      return reply;
    }
  }
  if (!times_file_.empty()) {
    std::ofstream times(times_file_, std::ios::app);
    times << function << " " << std::chrono::duration<double>(Clock::now() - called).count()
          << "\n";
  }
  json r;
  try {
    r = json::parse(answer);
  } catch (const json::exception&) {
    reply.kind = "protocol";
    reply.message = "the worker sent a malformed reply while running " + function;
    return reply;
  }
  reply.ok = r.value("ok", false);
  if (!reply.ok) {
    reply.kind = r.value("kind", "protocol");
    const std::string message = r.value("message", "");
    if (reply.kind == "not_implemented")
      reply.message = message;
    else if (reply.kind == "invalid_argument")
      reply.message = function + " threw std::invalid_argument: " + message;
    else
      reply.message =
          function + " threw " + r.value("type", std::string("an exception")) + ": " + message;
    return reply;
  }
  for (const json& bits : grade::items_of(r, "returns"))
    reply.returns.push_back(std::bit_cast<double>(bits.get<std::uint64_t>()));
  // Writes outside the buffers it was given, found in the canaries around each one.
  for (const Arg& a : args) {
    if (!a.is_buffer || !a.damage) continue;
    const GuardDamage d = a.damage();
    if (d.intact()) continue;
    reply.ok = false;
    reply.kind = "out_of_bounds";
    reply.message =
        function + " wrote outside " + (a.name.empty() ? "a buffer" : a.name) + ": " +
        (d.before ? std::to_string(d.before) + " element(s) before its start" : std::string()) +
        (d.before && d.after ? ", " : "") +
        (d.after ? std::to_string(d.after) + " element(s) after its end (the first " +
                       std::to_string(d.first_after) + " past the last element)"
                 : std::string()) +
        ". A loop that runs past n (a tail handled with a full batch?) writes memory it does not "
        "own.";
    return reply;
  }
  return reply;
}

::testing::AssertionResult succeeded(const Reply& reply) {
  if (reply.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << reply.message;
}

}  // namespace workbook::sealed
