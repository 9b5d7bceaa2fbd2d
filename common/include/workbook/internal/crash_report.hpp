#pragma once
/// \file crash_report.hpp
/// \brief The crash report of test executables (see testing.hpp), split from its signal handler so
/// that it can be tested on facts made up for the purpose.

#include <workbook/live_buffers.hpp>

#include <cstddef>
#include <cstdint>

namespace workbook::testing::internal {

/// What the signal handler knows when a test crashes. Strings are never null ("" when unknown).
struct CrashFacts {
  int signal = 0;                 ///< SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT
  int code = 0;                   ///< siginfo's si_code
  std::uintptr_t address = 0;     ///< siginfo's si_addr
  std::uintptr_t stack = 0;       ///< the stack pointer at the fault; 0 when unknown
  const char* test = "";          ///< "Relu.UnalignedInputAndOutput"
  const char* function = "";      ///< the function under test, from testing::Cases
  const char* file = "";          ///< the file to edit, from testing::Cases
  const char* case_context = "";  ///< the case running: "n = 17"
  /// Where in the lab's code it crashed, with the line's text (describe_code_location); "" when
  /// no frame of the stack lies in a lab's source.
  const char* location = "";
  /// The compiler's warnings about the lab's code, with their heading (compiler_warnings.hpp).
  const char* warnings = "";
  /// The lab's ThreadSanitizer command (set_race_command), "" for a lab without threads.
  const char* race_command = "";
  const char* earlier = "";  ///< the most telling failure of the cases before it
  /// That failure's diagnosis names a mistake or a pattern: the report leads with it, since it
  /// shows more than the crash's own explanation of what faults like it usually are.
  bool earlier_names_a_cause = false;
  const char* lab = "";                 ///< "lab01", from the executable's folder
  const char* lab_folder = "";          ///< "labs/01_vectorized_relu"
  const LiveBuffer* buffers = nullptr;  ///< the test's live buffers
  std::size_t buffer_count = 0;
  std::size_t simd_bytes = 64;  ///< bytes per SIMD register in this build
};

/// Writes the report of `facts` into `out` (NUL-terminated, cut at `capacity`) and returns its
/// length. Async-signal-safe: no allocation, no locks, no stdio.
std::size_t format_crash_report(const CrashFacts& facts, char* out, std::size_t capacity);

/// Installs the handlers of SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT on an alternate stack (so
/// that a stack overflow is reported too); `argv0` locates the lab. Each prints the report on
/// stdout and exits with kCrashExitCode.
void install_crash_report(const char* argv0);

/// True when install_crash_report ran in this process (run_all_tests leaves it out under
/// AddressSanitizer and ThreadSanitizer, which report crashes themselves).
bool crash_report_installed();

/// What is running now, as the crash report names it: the test, the function and case of the
/// running testing::Cases, and the most telling failure of the cases before it. For a report of
/// another kind (a watchdog's, on a hang). Async-signal-safe; returns the length written.
std::size_t format_running(char* out, std::size_t capacity);

/// The next step, as the crash report says it: "edit FILE" (the running testing::Cases' file),
/// else "edit your code in LAB_FOLDER", else "edit your code". Async-signal-safe.
std::size_t format_edit(char* out, std::size_t capacity);

/// What the handler names: the running test ("" between tests), and the function, file, case and
/// earlier failures of the running testing::Cases ("" when none). Copied into fixed buffers.
void set_crash_test(const char* test);
/// See set_crash_test.
void set_crash_case(const char* function, const char* file, const char* case_context,
                    const char* earlier, bool earlier_names_a_cause = false);

/// The command that runs the lab's tests under ThreadSanitizer, for a lab of threads: a crash or a
/// std::terminate there may come from a data race, and the reports then name the command.
void set_race_command(const char* command);

}  // namespace workbook::testing::internal
