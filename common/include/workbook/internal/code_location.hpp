#pragma once
/// \file code_location.hpp
/// \brief The line of the student's code where a crash or an exception happened, for the first
/// message a student reads (rather than a sanitizer build two commands away).
///
/// A stack is a list of return addresses (`backtrace`); binutils' `addr2line` turns those in the
/// test executable into functions, files and lines, inlined calls included (lab libraries are built
/// with line tables, `-g1`). Everything from capture to the text is async-signal-safe, so that the
/// crash handler can use it: fixed buffers, `vfork` and `execve`, `poll` and `read`.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace workbook::testing::internal {

/// Up to 48 return addresses of one thread's stack, innermost first.
struct Stack {
  static constexpr int kCapacity = 48;
  void* frames[kCapacity] = {};
  int count = 0;
  /// frames[0] is the faulting instruction itself (a crash), not a return address: it is looked up
  /// as it is, where a return address is looked up one byte back (at its call).
  bool first_is_exact = false;
};

/// Finds addr2line and the executable's address range, and loads the unwinder: once, at start-up,
/// outside any signal handler.
void prepare_code_location();

/// The calling thread's stack, less its `skip` innermost frames (the capturing function's own).
Stack capture_stack(int skip);

/// In a signal handler: the stack from the faulting instruction `fault_pc` outwards (the handler's
/// own frames dropped).
Stack stack_at_fault(std::uintptr_t fault_pc);

/// The stack of thread `tid` of this process, for a hang's report: the thread is sent a signal
/// whose handler takes its stack (a thread blocked in a wait runs the handler, then waits again).
/// Empty when it does not answer within `patience` (it ended, or blocks that signal).
Stack stack_of_thread(pid_t tid, std::chrono::milliseconds patience);

/// The stack where the last exception of this process was thrown (by any thread), recorded by a
/// wrapper of the C++ runtime's __cxa_throw; empty when none was thrown since clear_last_throw()
/// (and always under a sanitizer, which wraps __cxa_throw itself).
Stack last_throw();
void clear_last_throw();
/// Records the calling thread's stack as the last throw's: called by the wrapper of __cxa_throw
/// (throw_site.cpp), less its own frame and the wrapper's.
void record_throw_site();

/// Writes where `stack` lies in a lab's code ("  At labs/02_x/matmul.cpp:87, in pack_b (inside
/// std::fill):" and the source line) into `out`; returns the length, 0 when no frame of the stack
/// is in a lab's source (or addr2line is missing). `verb` says what happened there ("crashed").
/// `innermost`, when given, is set to whether that frame is the stack's innermost one (the lab's
/// own line threw or faulted, rather than a library function it called).
/// `thrown`, for an exception, is its what(): where the lab's own line threw it, the line shown is
/// the throw whose text matches (an optimised build may merge two throws of one function into one
/// call, whose line is then either's).
std::size_t describe_code_location(const Stack& stack, const char* verb, char* out,
                                   std::size_t capacity, bool* innermost = nullptr,
                                   const char* thrown = nullptr);

/// The part of describe_code_location that follows addr2line, split out to be tested on made-up
/// output: `symbols` is `addr2line -C -f -i -p` output for the stack's frames in the executable,
/// with a line "[library] <name>" standing for a frame outside it (a library's, named by dladdr).
std::size_t describe_symbolized(const char* symbols, const char* verb, char* out,
                                std::size_t capacity, bool* innermost = nullptr,
                                const char* thrown = nullptr);

}  // namespace workbook::testing::internal
