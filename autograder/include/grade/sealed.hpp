#pragma once
/// \file sealed.hpp
/// \brief The checker's side of a sealed (hidden) test: inputs go to a worker process that holds
/// the student's code, outputs come back through shared memory, and the oracle checks them here, in
/// a process with no student code in it. A verdict cannot be forged from inside the worker: the
/// only thing the student's code can send back is its results.
///
/// \code
/// TEST(Relu, MatchesOracle) {
///   workbook::sealed::Worker worker;                     // a fresh sandboxed process
///   auto x = worker.alloc<float>(1000);
///   auto y = worker.alloc<float>(1000, /*misalign=*/3);
///   fill(x.span());                                     // keep a private copy of the inputs
///   ASSERT_CALL(worker.call("relu", {x, y}));            // poisons y, calls, checks the guards
///   EXPECT_CORRECT(check_relu(copy_of_x, y.copy()));
/// }
/// \endcode
///
/// The worker: WORKBOOK_SEALED_WORKER (its path), WORKBOOK_SEALED_SANDBOX (a sandbox spec written
/// by the grader; without it the worker runs as a plain child, as in the project's CI),
/// WORKBOOK_SEALED_TIMEOUT (seconds per call, default 30), WORKBOOK_SEALED_DEADLINES (seconds per
/// call of named functions, "relu=1,dot=2.5": the grader derives them from the reference's time),
/// WORKBOOK_SEALED_TIMES (a file: each call's function and seconds are appended to it; prepare
/// times the reference this way), WORKBOOK_SEALED_GPU=1 (without a sandbox spec: the worker is a
/// CUDA program, see SandboxSpec::gpu).
///
/// A call that meets an EnvironmentError (the grader's machine cannot isolate the worker) ends the
/// checker with grade::kEnvironmentErrorExit: the grader reports the lab as environment_error
/// instead of failing the student's tests.

#include <grade/sealed_worker.hpp>

#include <workbook/buffer.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace workbook::grade {
class SandboxProcess;
}

namespace workbook::sealed {

/// A function's per-call deadline in the hidden tests, where the reference's time for it is known:
/// kCallDeadlineFactor times the reference's slowest call, at least kCallDeadlineFloorSeconds. The
/// floor is longer than any wait the hidden tests make on purpose (lab 03's tasks wait 10 s for
/// each other, so that a pool that never runs them together is told so, not cut off as too slow).
inline constexpr double kCallDeadlineFactor = 100;
inline constexpr double kCallDeadlineFloorSeconds = 15;  ///< see kCallDeadlineFactor

/// A buffer in the memory shared with the worker, with canary zones on both sides.
template <class T>
class Region {
 public:
  static constexpr std::size_t kGuard = 64;  ///< canary elements on each side

  Region() = default;
  Region(std::byte* base, std::size_t offset, std::size_t n, std::size_t misalign)
      : base_(base), offset_(offset), n_(n), misalign_(misalign) {
    std::fill(storage(), storage() + total(), Poison<T>::canary());
    poison();
  }

  T* data() { return storage() + kGuard + misalign_; }
  const T* data() const { return storage() + kGuard + misalign_; }
  std::size_t size() const { return n_; }
  std::size_t misalign() const { return misalign_; }
  std::span<T> span() { return {data(), n_}; }
  std::span<const T> span() const { return {data(), n_}; }
  /// Byte offset of element 0 in the shared memory (what the worker is told).
  std::size_t offset() const { return offset_ + (kGuard + misalign_) * sizeof(T); }

  void poison() { std::fill(data(), data() + n_, Poison<T>::value()); }
  /// Canaries the call changed, before and after the buffer.
  GuardDamage damage() const {
    GuardDamage d;
    const T* s = storage();
    for (std::size_t i = 0; i < kGuard + misalign_; ++i) d.before += !Poison<T>::is_canary(s[i]);
    bool first = true;
    for (std::size_t i = 0; i < kGuard; ++i) {
      if (!Poison<T>::is_canary(s[kGuard + misalign_ + n_ + i])) {
        ++d.after;
        if (first) d.first_after = i;
        first = false;
      }
    }
    return d;
  }
  /// The contents, as a GuardedBuffer for the harness's checks (its own guards stay intact: the
  /// shared ones are checked by Worker::call).
  GuardedBuffer<T> copy() const {
    GuardedBuffer<T> out(n_, misalign_);
    std::memcpy(out.data(), data(), n_ * sizeof(T));
    return out;
  }

 private:
  T* storage() { return reinterpret_cast<T*>(base_ + offset_); }
  const T* storage() const { return reinterpret_cast<const T*>(base_ + offset_); }
  std::size_t total() const { return 2 * kGuard + misalign_ + n_; }

  std::byte* base_ = nullptr;
  std::size_t offset_ = 0, n_ = 0, misalign_ = 0;
};

/// An argument of a call: a region (with the role it plays) or a number.
struct Arg {
  bool is_buffer = false;
  bool output = false;  ///< poisoned before the call
  std::size_t offset = 0, count = 0;
  std::string type, name;
  double number = 0;
  std::function<GuardDamage()> damage;
  std::function<void()> poison;

  template <class T>
  Arg(const Region<T>& r)
      : is_buffer(true), offset(r.offset()), count(r.size()), type(type_name<T>()), damage([&r] {
          return r.damage();
        }) {}
  Arg(double value) : number(value) {}
  Arg(int value) : number(value) {}
  Arg(std::size_t value) : number(static_cast<double>(value)) {}
};

/// Marks a region as the call's output: poisoned before, named in guard messages.
template <class T>
Arg output(Region<T>& r, std::string name = "out") {
  Arg a(r);
  a.output = true;
  a.name = std::move(name);
  a.poison = [&r] { r.poison(); };
  return a;
}
/// Names an input region in messages.
template <class T>
Arg input(const Region<T>& r, std::string name = "in") {
  Arg a(r);
  a.name = std::move(name);
  return a;
}

/// What a call gave back.
struct Reply {
  bool ok = false;
  std::string kind;  ///< not_implemented, invalid_argument, exception, crashed, timeout, protocol
  std::string message;  ///< for a student: what happened
  std::vector<double> returns;
  double value(std::size_t i = 0) const { return i < returns.size() ? returns[i] : 0.0; }
};

/// A worker process with the student's code, and the memory shared with it.
class Worker {
 public:
  explicit Worker(std::size_t capacity_bytes = std::size_t{256} << 20);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// A new region of n elements, its first element `misalign` elements past a 64-byte boundary.
  template <class T>
  Region<T> alloc(std::size_t n, std::size_t misalign = 0) {
    const std::size_t bytes = (2 * Region<T>::kGuard + misalign + n) * sizeof(T);
    const std::size_t offset = reserve(bytes);
    return Region<T>(base_, offset, n, misalign);
  }
  /// Frees every region (their memory is reused by the next alloc).
  void reset() { used_ = 0; }

  /// Calls `function` in the worker: poisons the outputs, waits for the reply (the timeout kills
  /// the worker), then checks every region's canaries. Not ok when any of that failed.
  Reply call(const std::string& function, const std::vector<Arg>& args);

  /// What the worker printed so far (after it ended; for messages).
  std::string output();

 private:
  std::size_t reserve(std::size_t bytes);
  void start();
  std::string ended(const std::string& doing);

  std::size_t capacity_;
  std::size_t used_ = 0;
  int memfd_ = -1;
  std::byte* base_ = nullptr;
  int to_worker_ = -1, from_worker_ = -1;
  std::string buffer_;
  double timeout_ = 30;
  std::map<std::string, double> deadlines_;  ///< per function, from the reference's time
  std::string times_file_;
  std::unique_ptr<grade::SandboxProcess> process_;
  std::string dead_;  ///< why the worker is gone, once it is
  std::string output_;
};

/// A reply as a GoogleTest assertion: the message says what went wrong and which file to edit.
::testing::AssertionResult succeeded(const Reply& reply);

}  // namespace workbook::sealed

/// Asserts that a sealed call returned normally (the kernel ran, wrote only its outputs).
#define ASSERT_CALL(reply) ASSERT_TRUE(::workbook::sealed::succeeded(reply))
#define EXPECT_CALL_OK(reply) EXPECT_TRUE(::workbook::sealed::succeeded(reply))
