#pragma once
/// \file perf.hpp
/// \brief A lab's performance spec: perf cases, each a function that sets up inputs, states the
/// work the roofline counts, and hands one kernel to the harness.
///
/// \code
/// void relu(workbook::perf::Case& perf) {
///   const std::size_t n = std::size_t{64} << 20;     // 64 Mi floats, far past the caches
///   workbook::AlignedVector<float> x(n);
///   workbook::fill_uniform(x, perf.rng());
///   workbook::GuardedBuffer<float> y(n);
///   const auto relu = perf.timed(lab01::relu);       // the function timed (see timed())
///   perf.describe("relu", "ReLU of 64 Mi floats");
///   perf.work({.ops = double(n), .bytes = 8.0 * double(n)});
///   perf.measure({
///       .run = [&] { relu(x, y.span()); },
///       .poison = [&] { y.poison(); },
///       .verify = [&] { return check_relu(x, y); },
///       .output = workbook::perf::output_of(y, workbook::Tolerance::exact()),
///   });
/// }
/// WORKBOOK_PERF_CASE(relu);
/// \endcode
///
/// The same case file is linked into two workers, one with the student's kernels and one with the
/// reference's; `workbook-perf` starts both and times them in alternation (see
/// internal/perf_driver.hpp). Each worker checks its own outputs (verify), and the driver also
/// checks one timed call itself: after a batch it picks at random, both workers copy the declared
/// output into shared memory and the driver compares yours with the reference's, element by element
/// (see Output). Run a worker by hand to time your kernels alone: `lab01_perf [case...]`. The lab's
/// bench runs the same cases with the handout's numbered versions in the timed function's place
/// (bench.hpp).

#include <workbook/check.hpp>
#include <workbook/roofline.hpp>
#include <workbook/seed.hpp>
#include <workbook/timing.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

/// Perf cases and the perf test: a lab's performance spec, the workers that time it, and the
/// driver that compares the student's kernel with the reference's.
namespace workbook::perf {

/// The element type of a kernel's output, as the driver compares it (see Output).
enum class Element { f32, i8, i32 };
const char* to_string(Element e);                   ///< "f32", "i8", "i32"
Element element_from_string(const std::string& s);  ///< the inverse; throws on anything else
std::size_t size_of(Element e);                     ///< bytes per element
/// The bytes of `count` elements rounded up to 64: in the driver's shared memory, where the
/// reference's scales (floats) start after its output.
std::size_t output_bytes(Element e, std::size_t count);

/// The Element of float, std::int8_t and std::int32_t outputs.
template <class T>
constexpr Element element_of() {
  static_assert(
      std::is_same_v<T, float> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int32_t>,
      "a perf output holds float, int8_t or int32_t");
  if constexpr (std::is_same_v<T, float>) return Element::f32;
  if constexpr (std::is_same_v<T, std::int8_t>) return Element::i8;
  return Element::i32;
}

/// What a kernel writes, declared so that the driver can check a timed call itself: a worker's own
/// verify runs in the student's process, where the student's code could fake it. After one timed
/// batch the driver picks at random (the outputs poisoned before it), both workers copy the output
/// into shared memory the driver provides, and the driver compares yours with the reference's (same
/// seed, same inputs), every element: both NaN, equal, or |yours - reference's| <= 2 (rel scale +
/// abs), twice the case's own tolerance since both may err by it in opposite directions.
struct Output {
  Element element = Element::f32;  ///< the type of each element
  std::size_t count = 0;           ///< how many elements
  /// Copies the output of the last call into `to` (count elements). Not timed: a GPU case
  /// downloads the output here.
  std::function<void(std::span<std::byte> to)> copy;
  Tolerance tolerance = Tolerance::exact();  ///< the case's own check's (see check.hpp)
  /// What element i's error scales with, as in ElementwiseCheck::scale (evaluated in the
  /// reference's worker); empty: the larger magnitude of the two outputs' element i, over 1 - rel
  /// (an upper bound of the exact answer's, which the check scales with).
  std::function<double(std::size_t)> scale = {};
};

/// The output `values`, compared with `tolerance` (and `scale`, see Output).
template <class T>
Output output_of(std::span<const T> values, Tolerance tolerance = Tolerance::exact(),
                 std::function<double(std::size_t)> scale = {}) {
  return {element_of<T>(), values.size(),
          [values](std::span<std::byte> to) {
            std::memcpy(to.data(), values.data(), values.size_bytes());
          },
          std::move(tolerance), std::move(scale)};
}
/// An output buffer's elements (not its guards), compared with `tolerance` (and `scale`).
template <class T>
Output output_of(const GuardedBuffer<T>& buffer, Tolerance tolerance = Tolerance::exact(),
                 std::function<double(std::size_t)> scale = {}) {
  return output_of(buffer.span(), std::move(tolerance), std::move(scale));
}
/// A kernel's single float result (a reduction's), compared with `tolerance` (and `scale`).
inline Output output_of(const float& result, Tolerance tolerance = Tolerance::exact(),
                        std::function<double(std::size_t)> scale = {}) {
  return output_of(std::span<const float>(&result, 1), std::move(tolerance), std::move(scale));
}

/// A reduction's single result, compared as check_reduction bounds it: two results inside the
/// interval it accepts differ by at most the interval's width.
inline Output output_of(const float& result, const ReductionOracle& oracle) {
  const Interval accepted = reduction_interval(oracle);
  const double half_width =
      std::isfinite(accepted.hi - accepted.lo) ? (accepted.hi - accepted.lo) / 2 : 0;
  return output_of(
      result, Tolerance{.rel = 0,
                        .abs = half_width,
                        .derivation = "half the width of the interval check_reduction accepts"});
}

/// One kernel, as a case hands it to the harness. The buffers it captures must outlive measure().
struct Kernel {
  std::function<void()> run;            ///< one call of the kernel under test
  std::function<void()> poison;         ///< fills the outputs with poison before the timed runs
  std::function<CheckResult()> verify;  ///< after the timed runs: were the outputs written, right?
  /// What run() writes, for the driver's own check of a timed call (see Output). Every lab's
  /// case declares it; without it (count 0) the driver checks nothing itself and says so.
  Output output = {};
  /// How to time run(); empty: the host clock around each call (local_runner). A GPU case passes
  /// workbook::cuda::gpu_runner(run): the GPU's own timestamps, the L2 cache flushed before each
  /// run.
  BatchRunner runner = {};
};

/// Another kernel timed after the comparison and shown beside it, as a row of the table and a point
/// on the plot: a library baseline (OpenBLAS sgemm), or a variant built on the kernel under test
/// (your parallel kernel on one thread, for a speedup). Declare extras before measure().
///
/// An extra on Side::yours whose work is the case's own but with threads = 1, while the case's has
/// more, is the kernel on one thread: the feedback then adds the speedup (its time / yours) and
/// the parallel efficiency (speedup / threads).
struct Extra {
  /// Which worker times the extra: it decides whose code the extra runs.
  enum class Side {
    library,  ///< the same code in both workers: timed once, in the reference's when there is one
    yours,    ///< calls the kernel under test: timed in the student's worker
  };
  std::string label;          ///< "OpenBLAS sgemm", "your parallel_relu on 1 thread"
  Side side = Side::library;  ///< which worker times it
  std::function<void()> run;  ///< one call; not verified (the correctness tests cover it)
  Work work;                  ///< the work of one call
  BatchRunner runner = {};    ///< how to time it; empty: the host clock (see Kernel::runner)
};

/// The function a case times, as Case::timed hands it back: call it as you would the function.
/// In the perf tests it is the function itself (yours in your worker, the reference's in the
/// other); the lab's bench puts each numbered version of it in its place in turn, on the same
/// inputs (solutions/NN/bench.cpp lists them).
template <class Signature>
class Timed;
/// Timed for a function returning R from Args (the only form there is).
template <class R, class... Args>
class Timed<R(Args...)> {
 public:
  /// `own`, unless `instead` (the bench's choice, switched between runs) holds a function.
  Timed(R (*own)(Args...), const std::function<R(Args...)>* instead)
      : own_(own), instead_(instead) {}
  /// One call: the version the bench chose, else the function given to Case::timed.
  R operator()(Args... args) const {
    if (instead_ != nullptr && *instead_) return (*instead_)(std::forward<Args>(args)...);
    return own_(std::forward<Args>(args)...);
  }

 private:
  R (*own_)(Args...);
  const std::function<R(Args...)>* instead_;
};

/// What a case function talks to.
class Case {
 public:
  /// A case named `name` drawing its inputs from `seed`: the driver gives both workers the same
  /// one, so the student's kernel and the reference's run on the same inputs.
  explicit Case(std::string name, std::uint64_t seed);
  virtual ~Case() = default;

  const std::string& name() const { return name_; }  ///< the case's registered name ("relu")
  std::uint64_t seed() const { return seed_; }       ///< printed with a failure, to replay it
  /// The generator for this case's inputs (seeded from WORKBOOK_SEED and the case name).
  Rng& rng() { return rng_; }

  /// The function under test and a line about the case, both shown in the feedback.
  void describe(std::string function, std::string text);
  /// The work of one call, for the roofline.
  void work(const Work& work);
  /// Advice for a kernel under `below` of its roof; the lowest matching threshold wins.
  void hint(double below, std::string text);
  /// Another kernel to time and show beside the comparison (see Extra).
  void extra(Extra extra);
  /// What one call is made of, when a time per item tells more than a time per call: after
  /// per_item(16384, "task") the feedback adds "Per task (16384 per call): yours 0.84 us,
  /// reference 0.80 us".
  void per_item(double items_per_call, std::string item);

  /// The function this case times, to be called through what this returns: `function` itself in
  /// the perf tests; the bench calls each numbered version of it in its place, on the same inputs.
  /// `auto relu = perf.timed(lab01::relu);` then `.run = [&] { relu(x, y.span()); }`.
  template <class R, class... Args>
  Timed<R(Args...)> timed(R (*function)(Args...)) {
    const void* instead = stand_in(reinterpret_cast<void (*)()>(function), typeid(R(Args...)));
    return {function, static_cast<const std::function<R(Args...)>*>(instead)};
  }

  /// Hands the kernel to the harness, which checks it once, then times it and checks again.
  /// Returns when the harness is done.
  virtual void measure(const Kernel& kernel) = 0;

  const std::string& function() const { return function_; }        ///< as given to describe()
  const std::string& description() const { return description_; }  ///< as given to describe()
  const Work& work() const { return work_; }                       ///< as given to work()
  /// Every hint(), lowest threshold first.
  const std::vector<Hint>& hints() const { return hints_; }
  const std::vector<Extra>& extras() const { return extras_; }  ///< every extra(), in order
  double items_per_call() const { return items_per_call_; }     ///< 0 unless per_item() was called
  const std::string& item() const { return item_; }  ///< what an item is ("task"), or empty

 protected:
  /// The bench's hook behind timed(): where it keeps the version it times in place of `function`
  /// (a std::function<Signature>, `signature` its typeid, switched between runs), or null for
  /// `function` itself, as in the perf tests (this default).
  virtual const void* stand_in(void (*function)(), const std::type_info& signature) {
    (void)function, (void)signature;
    return nullptr;
  }

 private:
  std::string name_;
  std::uint64_t seed_;
  Rng rng_;
  std::string function_, description_;
  Work work_;
  std::vector<Hint> hints_;
  std::vector<Extra> extras_;
  double items_per_call_ = 0;
  std::string item_;
};

/// True when an extra is the case's own kernel on one thread (see Extra): same side (yours), same
/// operations and bytes, threads = 1 while the case's work has more.
bool is_one_thread_run(const Work& case_work, Extra::Side side, const Work& extra_work);

/// "speedup 1.93x on 2 threads, a parallel efficiency of 97%": the time on one thread over the time
/// on `threads`, and that speedup over the ideal one.
std::string speedup_note(double one_thread_seconds, double seconds, unsigned threads);

/// "per task: 0.84 us" for `items` per call of `seconds`.
std::string per_item_note(double seconds, double items, const std::string& item);

/// A perf case: sets up its inputs, then calls Case::measure once.
using CaseFunction = void (*)(Case&);

/// One case of this executable.
struct Registered {
  std::string name;       ///< the function's name, as WORKBOOK_PERF_CASE spelled it
  CaseFunction function;  ///< the case itself
};
/// The cases of this executable, in registration order (a function-local static, so that static
/// Registration objects in any translation unit can add to it safely).
std::vector<Registered>& registry();

/// Adds a case to the registry (use WORKBOOK_PERF_CASE).
struct Registration {
  /// Appends {name, function} to registry(); runs before main(), from a static object.
  Registration(const char* name, CaseFunction function);
};

/// The cases only the lab's bench times (WORKBOOK_BENCH_CASE): the other sizes its handout's
/// table shows (in L1, from memory), which are no perf test. Inline, so that the perf workers,
/// which never run them, need nothing more to link.
inline std::vector<Registered>& bench_registry() {
  static std::vector<Registered> cases;
  return cases;
}
/// Adds a case to bench_registry() (use WORKBOOK_BENCH_CASE).
struct BenchRegistration {
  /// Appends {name, function} to bench_registry(); runs before main(), from a static object.
  BenchRegistration(const char* name, CaseFunction function) {
    bench_registry().push_back({name, function});
  }
};

/// main() of a perf worker: `--list`, the driver's `--worker` protocol, or, with case names (or
/// none: all), times the kernels in this process and prints them against the ceilings. A case
/// that throws workbook::Skipped (no GPU here) is reported as skipped, exit code kSkipReturnCode.
/// `load_ceilings`, when given, replaces the CPU ceilings of the stand-alone mode (a GPU worker
/// passes the GPU's).
int worker_main(int argc, char** argv,
                const std::function<Ceilings(const std::string& path)>& load_ceilings = {});

/// The timer of a kernel: its own runner, else the host clock around each call.
inline BatchRunner runner_of(const Kernel& kernel) {
  return kernel.runner ? kernel.runner : local_runner(kernel.run);
}
/// The timer of an extra: its own runner, else the host clock around each call.
inline BatchRunner runner_of(const Extra& extra) {
  return extra.runner ? extra.runner : local_runner(extra.run);
}

}  // namespace workbook::perf

/// Registers `function` (a void(workbook::perf::Case&)) as the perf case of the same name. The
/// build system finds these lines and makes one test of each: `labNN.perf.relu` for `relu`.
#define WORKBOOK_PERF_CASE(function) \
  static const ::workbook::perf::Registration workbook_perf_case_##function(#function, &function)

/// Registers `function` as a case that only the lab's bench times (see bench_registry): no perf
/// test is made of it, and the perf workers do not list it.
#define WORKBOOK_BENCH_CASE(function)                                                        \
  static const ::workbook::perf::BenchRegistration workbook_bench_case_##function(#function, \
                                                                                  &function)
