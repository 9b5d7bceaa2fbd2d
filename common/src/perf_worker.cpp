// The worker side of perf cases: the case registry, the driver protocol, and the stand-alone mode.
#include <workbook/internal/command_line.hpp>
#include <workbook/perf.hpp>

#include <workbook/internal/perf_verdict.hpp>
#include <workbook/internal/perf_worker.hpp>

#include <workbook/ceilings.hpp>
#include <workbook/not_implemented.hpp>
#include <workbook/report.hpp>
#include <workbook/skip.hpp>
#include <workbook/timing.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include <sys/mman.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

namespace workbook::perf {

Case::Case(std::string name, std::uint64_t seed)
    : name_(std::move(name)), seed_(seed), rng_(seed) {}

void Case::describe(std::string function, std::string text) {
  function_ = std::move(function);
  description_ = std::move(text);
}

void Case::work(const Work& work) {
  work_ = work;
}

void Case::hint(double below, std::string text) {
  hints_.push_back({below, std::move(text)});
  std::sort(hints_.begin(), hints_.end(),
            [](const Hint& a, const Hint& b) { return a.below < b.below; });
}

void Case::extra(Extra extra) {
  extras_.push_back(std::move(extra));
}

void Case::per_item(double items_per_call, std::string item) {
  if (!(items_per_call > 0))
    throw std::invalid_argument("per_item: a call must be made of at least one " + item);
  items_per_call_ = items_per_call;
  item_ = std::move(item);
}

const char* to_string(Element e) {
  switch (e) {
    case Element::f32:
      return "f32";
    case Element::i8:
      return "i8";
    case Element::i32:
      return "i32";
  }
  return "?";
}

Element element_from_string(const std::string& s) {
  for (Element e : {Element::f32, Element::i8, Element::i32})
    if (s == to_string(e)) return e;
  throw std::invalid_argument("not an output element type: '" + s + "'");
}

std::size_t size_of(Element e) {
  switch (e) {
    case Element::f32:
      return sizeof(float);
    case Element::i8:
      return sizeof(std::int8_t);
    case Element::i32:
      return sizeof(std::int32_t);
  }
  return 0;
}

std::size_t output_bytes(Element element, std::size_t count) {
  return (size_of(element) * count + 63) / 64 * 64;
}

bool is_one_thread_run(const Work& case_work, Extra::Side side, const Work& extra_work) {
  return side == Extra::Side::yours && case_work.threads > 1 && extra_work.threads == 1 &&
         extra_work.ops == case_work.ops && extra_work.bytes == case_work.bytes;
}

std::string speedup_note(double one_thread_seconds, double seconds, unsigned threads) {
  const double speedup = one_thread_seconds / seconds;
  return "speedup " + format_fixed(speedup, 2) + "x on " + std::to_string(threads) +
         " threads, a parallel efficiency of " + format_percent(speedup / threads);
}

std::string per_item_note(double seconds, double items, const std::string& item) {
  return "per " + item + ": " + format_seconds(seconds / items);
}

std::vector<Registered>& registry() {
  static std::vector<Registered> cases;
  return cases;
}

Registration::Registration(const char* name, CaseFunction function) {
  registry().push_back({name, function});
}

namespace {

// --- The driver protocol: JSON lines on fds 3 (commands in) and 4 (replies out) ------------------

class Channel {
 public:
  Channel() : in_(fdopen(3, "r")), out_(fdopen(4, "w")) {
    if (in_ == nullptr || out_ == nullptr)
      throw std::runtime_error(
          "--worker needs the driver's channel on fds 3 and 4: run it through workbook-perf");
  }
  void send(const nlohmann::json& message) {
    const std::string line = message.dump() + "\n";
    std::fputs(line.c_str(), out_);
    std::fflush(out_);
  }
  // The next command, or an empty object when the driver is gone.
  nlohmann::json receive() {
    char* line = nullptr;
    std::size_t size = 0;
    const ssize_t n = getline(&line, &size, in_);
    nlohmann::json command =
        n > 0 ? nlohmann::json::parse(std::string(line, static_cast<std::size_t>(n)))
              : nlohmann::json::object();
    std::free(line);
    return command;
  }

 private:
  FILE* in_;
  FILE* out_;
};

// The driver's shared memory for output snapshots, on fd 5 (see Output).
constexpr int kSnapshotFd = 5;

// Copies the output of the last call into the shared memory at `offset` (a multiple of the page
// size: each check the driver makes has a place of its own), and, when the driver asks (of the
// reference's worker), the scale of each element after it, as floats.
void snapshot(const Output& output, bool with_scale, std::size_t offset) {
  if (output.count == 0 || !output.copy)
    throw std::runtime_error("the driver asked for the output of a case that declares none");
  const std::size_t out_bytes = size_of(output.element) * output.count;
  const std::size_t need =
      output_bytes(output.element, output.count) + (with_scale ? sizeof(float) * output.count : 0);
  struct stat st {};
  if (fstat(kSnapshotFd, &st) != 0 || static_cast<std::size_t>(st.st_size) < offset + need)
    throw std::runtime_error(
        "the driver's shared memory for the output (fd 5) is missing or too small");
  void* p = mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_SHARED, kSnapshotFd,
                 static_cast<off_t>(offset));
  if (p == MAP_FAILED)
    throw std::runtime_error(std::string("mapping the driver's shared memory: ") +
                             std::strerror(errno));
  auto* base = static_cast<std::byte*>(p);
  try {
    output.copy({base, out_bytes});
    if (with_scale) {
      auto* scale = reinterpret_cast<float*>(base + output_bytes(output.element, output.count));
      for (std::size_t i = 0; i < output.count; ++i) scale[i] = static_cast<float>(output.scale(i));
    }
  } catch (...) {
    munmap(p, need);
    throw;
  }
  munmap(p, need);
}

class WorkerCase : public Case {
 public:
  // `fresh`: the case set up again on inputs drawn from a seed the driver chose (see "fresh"
  // below); its first call is timed, so it is not called before.
  WorkerCase(std::string name, std::uint64_t seed, Channel& channel, bool fresh)
      : Case(std::move(name), seed), channel_(channel), fresh_(fresh) {}
  bool measured = false;
  /// Set when the driver asked for fresh inputs: the case function is to run again on this seed.
  std::optional<std::uint64_t> next_seed;

  void measure(const Kernel& kernel) override {
    measured = true;
    kernel.poison();
    if (fresh_) {
      // Whatever the set-up left in flight (a GPU's uploads from pageable memory return before
      // they land) finishes before "ready", not in the first timed call: copying the (poisoned)
      // output waits for it, as a GPU case's copy downloads after its device is done.
      if (kernel.output.count > 0 && kernel.output.copy) {
        std::vector<std::byte> scratch(size_of(kernel.output.element) * kernel.output.count);
        kernel.output.copy(scratch);
      }
    } else {
      // Check once before timing anything: a wrong kernel's speed means nothing. (On fresh inputs
      // the driver compares the output with the reference's instead.)
      kernel.run();
      if (CheckResult r = kernel.verify(); !r) {
        channel_.send({{"type", "wrong"}, {"function", function()}, {"report", r.report()}});
        return;
      }
    }
    const nlohmann::json hints = this->hints();
    nlohmann::json extras = nlohmann::json::array();
    for (const Extra& e : this->extras())
      extras.push_back({{"label", e.label},
                        {"side", e.side == Extra::Side::yours ? "yours" : "library"},
                        {"work", e.work}});
    nlohmann::json ready = {{"type", "ready"},        {"case", name()},
                            {"function", function()}, {"description", description()},
                            {"work", work()},         {"hints", hints},
                            {"extras", extras},       {"fresh", fresh_}};
    if (items_per_call() > 0) ready["per_item"] = {{"items", items_per_call()}, {"item", item()}};
    const Output& out = kernel.output;
    if (out.count > 0 && out.copy)
      ready["output"] = {{"element", to_string(out.element)},
                         {"count", out.count},
                         {"tolerance",
                          {{"rel", out.tolerance.rel},
                           {"abs", out.tolerance.abs},
                           {"derivation", out.tolerance.derivation}}},
                         {"scaled", static_cast<bool>(out.scale)}};
    channel_.send(ready);
    // Every timed run must write the outputs again; verify checks the last one did. (On fresh
    // inputs they are poisoned already, and settled.)
    if (!fresh_) kernel.poison();
    const BatchRunner runner = runner_of(kernel);
    for (;;) {
      const nlohmann::json command = channel_.receive();
      const std::string what = command.value("cmd", "quit");
      if (what == "run") {
        // A batch the driver checks: poisoned first, so that its own calls must write the output;
        // copied after it, outside the timed calls.
        const bool checked = command.value("snapshot", false);
        if (checked) kernel.poison();
        nlohmann::json reply = {{"type", "times"},
                                {"seconds", runner(command.at("count").get<int>())}};
        if (checked) {
          snapshot(out, command.value("scale", false) && out.scale,
                   command.value("offset", std::size_t{0}));
          reply["snapshot"] = true;
        }
        channel_.send(reply);
      } else if (what == "run_extra") {
        const Extra& extra = this->extras().at(command.at("index").get<std::size_t>());
        channel_.send(
            {{"type", "times"}, {"seconds", runner_of(extra)(command.at("count").get<int>())}});
      } else if (what == "fresh") {
        // New inputs, drawn from the driver's seed: this kernel and its buffers end here, and the
        // case function runs again (run_worker), so that no call has seen them before.
        next_seed = command.at("seed").get<std::uint64_t>();
        return;
      } else if (what == "verify") {
        const CheckResult r = kernel.verify();
        channel_.send({{"type", "verified"}, {"ok", r.ok}, {"report", r.report()}});
      } else {
        return;
      }
    }
  }

 private:
  Channel& channel_;
  bool fresh_;
};

const Registered* find_case(const std::string& name) {
  for (const Registered& r : registry())
    if (r.name == name) return &r;
  return nullptr;
}

int run_worker(const std::string& name, std::uint64_t seed) {
  Channel channel;
  const Registered* registered = find_case(name);
  if (registered == nullptr) {
    channel.send(
        {{"type", "error"}, {"message", "no perf case named '" + name + "' in this worker"}});
    return 2;
  }
  try {
    // Each pass sets the case up on new inputs (the driver's "fresh" command), until it says quit.
    bool fresh = false;
    for (std::optional<std::uint64_t> next = seed; next; fresh = true) {
      WorkerCase c(name, *next, channel, fresh);
      registered->function(c);
      if (!c.measured) {
        channel.send(
            {{"type", "error"}, {"message", "perf case '" + name + "' never called measure()"}});
        break;
      }
      next = c.next_seed;
    }
  } catch (const NotImplemented& e) {
    channel.send({{"type", "not_implemented"}, {"message", e.what()}, {"file", e.file()}});
  } catch (const Skipped& e) {
    channel.send({{"type", "skipped"}, {"message", e.what()}});
  } catch (const std::exception& e) {
    channel.send({{"type", "error"}, {"message", std::string("exception: ") + e.what()}});
  }
  return 0;
}

// --- Stand-alone: time this executable's kernels here and show them on the roofline --------------

class LocalCase : public Case {
 public:
  LocalCase(std::string name, std::uint64_t seed, const Ceilings& ceilings, Table& table,
            std::string& notes)
      : Case(std::move(name), seed), ceilings_(ceilings), table_(table), notes_(notes) {}

  void measure(const Kernel& kernel) override {
    kernel.poison();
    kernel.run();
    if (CheckResult r = kernel.verify(); !r) {
      std::cout << r.report();
      table_.add({name(), "wrong result", "", "", "", "", ""});
      return;
    }
    kernel.poison();
    const Timing t = time_runs(runner_of(kernel));
    if (CheckResult r = kernel.verify(); !r) {
      std::cout << r.report();
      table_.add({name(), "wrong after timing", "", "", "", "", ""});
      return;
    }
    const Analysis a = analyze(work(), t.summary.median, ceilings_);
    add_row(name(), t.summary, a);
    notes_ += "  " + name() + ": " + verdict(a) + "\n";
    if (items_per_call() > 0)
      notes_ += "    " + per_item_note(t.summary.median, items_per_call(), item()) + "\n";
    for (const Extra& e : extras()) {
      const Timing te = time_runs(runner_of(e));
      const Analysis ae = analyze(e.work, te.summary.median, ceilings_);
      add_row("  " + e.label, te.summary, ae);
      if (is_one_thread_run(work(), e.side, e.work))
        notes_ += "    " + speedup_note(te.summary.median, t.summary.median, work().threads) + "\n";
    }
    notes_ += "    next: " + next_step(a, hints()) + "\n";
  }

 private:
  void add_row(const std::string& label, const Summary& time, const Analysis& a) {
    const RooflineCells c = roofline_cells(time, a);
    table_.add({label, c.median, c.spread, c.gbs, c.gops, c.of_roof,
                a.memory_bound_model ? "memory" : "compute"});
  }

  const Ceilings& ceilings_;
  Table& table_;
  std::string& notes_;
};

int run_local(std::vector<std::string> names, const std::string& ceilings_path,
              const std::function<Ceilings(const std::string&)>& load_ceilings) {
  if (names.empty())
    for (const Registered& r : registry()) names.push_back(r.name);
  Ceilings ceilings;
  try {
    ceilings = load_ceilings
                   ? load_ceilings(ceilings_path)
                   : load_or_measure_ceilings(ceilings_path, false, [](const std::string& line) {
                       std::cerr << "  " << line << "\n";
                     });
  } catch (const Skipped& e) {
    std::cout << e.what() << "\n";
    return kSkipReturnCode;
  }
  Table table({"case", "median", "spread", "GB/s", "G op/s", "% of roof", "model"});
  std::string notes;
  int status = 0;
  std::size_t skipped = 0;
  for (const std::string& name : names) {
    const Registered* registered = find_case(name);
    if (registered == nullptr) {
      std::cerr << "no perf case named '" << name << "'; --list shows them\n";
      return 2;
    }
    try {
      LocalCase c(name, seed_for(name), ceilings, table, notes);
      registered->function(c);
    } catch (const Skipped& e) {
      std::cout << name << ": " << e.what() << "\n";
      table.add({name, "skipped", "", "", "", "", ""});
      ++skipped;
    } catch (const std::exception& e) {
      std::cout << name << ": " << e.what() << "\n";
      table.add({name, "failed", "", "", "", "", ""});
      status = 1;
    }
  }
  std::cout << table.str() << notes;
  // Nothing could run here (no GPU): a skip, as for the tests, not a pass.
  if (status == 0 && skipped == names.size()) return kSkipReturnCode;
  return status;
}

}  // namespace

void add_worker_options(CLI::App& app, WorkerOptions& o) {
  app.add_flag("--list", o.list, "list the perf cases");
  auto* worker =
      app.add_flag("--worker", o.worker, "serve the perf driver (workbook-perf) on fds 3, 4 and 5");
  app.add_option("--case", o.case_name, "the case to serve (with --worker)")->needs(worker);
  app.add_option_function<std::uint64_t>(
         "--seed", [&o](const std::uint64_t& seed) { o.seed = seed; },
         "the inputs' seed (with --worker; default: derived from the case's name)")
      ->needs(worker);
  app.add_option("--ceilings", o.ceilings, "the ceilings' cache of the stand-alone mode")
      ->capture_default_str();
  app.add_option("case", o.names, "the cases to time here, on the roofline (default: all)");
}

int run_worker_options(const WorkerOptions& o,
                       const std::function<Ceilings(const std::string&)>& load_ceilings) {
  if (o.list) {
    for (const Registered& r : registry()) std::cout << r.name << "\n";
    return 0;
  }
  if (o.worker) return run_worker(o.case_name, o.seed ? *o.seed : seed_for(o.case_name));
  return run_local(o.names, o.ceilings, load_ceilings);
}

int worker_main(int argc, char** argv,
                const std::function<Ceilings(const std::string&)>& load_ceilings) {
  WorkerOptions o{.ceilings = default_ceilings_path()};
  CLI::App app{
      "Times this build's perf cases on the roofline; workbook-perf runs it as a worker (--worker) "
      "to "
      "compare the student's kernel with the reference's."};
  add_worker_options(app, o);
  if (const std::optional<int> code = parse_command_line(app, argc, argv)) return *code;
  return run_worker_options(o, load_ceilings);
}

}  // namespace workbook::perf
