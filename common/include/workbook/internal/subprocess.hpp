#pragma once
/// \file internal/subprocess.hpp
/// \brief A child process with a private line channel: the perf driver runs the student's and the
/// reference's kernels in workers it talks to, and the autograder runs untrusted code this way.
///
/// The channel is a pair of pipes on the child's file descriptors 3 (it reads commands) and 4 (it
/// writes replies), apart from stdout and stderr, so whatever the code under test prints cannot
/// be mistaken for a reply.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace workbook {

/// A child process started with fork and exec, optionally with the line channel; owns the child
/// (kills and reaps it on destruction), so a worker never outlives the test that started it.
class Subprocess {
 public:
  /// What to run, and how.
  struct Options {
    std::vector<std::string> argv;  ///< argv[0]: the program's path
    bool channel = false;           ///< open the line channel on fds 3 and 4
    /// The child's environment ("NAME=value"); std::nullopt inherits this process's.
    std::optional<std::vector<std::string>> environment;
    /// Descriptors of this process the child gets as fds 5, 6, ... (after the channel's): the perf
    /// driver hands each worker a shared memory for its outputs this way.
    std::vector<int> extra_fds = {};
  };

  /// Starts the child. Throws std::runtime_error when the program cannot be started.
  explicit Subprocess(const Options& options);
  ~Subprocess();  ///< kills and reaps a child that is still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }  ///< the child's process id

  /// Sends one line (a newline is added). False when the child has closed its end.
  bool send(const std::string& line);

  /// The outcome of read_line().
  enum class Read {
    line,     ///< a whole line was read (without its newline)
    end,      ///< the child closed its end of the channel (it exited, or crashed)
    timeout,  ///< no whole line within the time allowed
  };
  /// Reads one line from the channel, waiting at most `timeout_seconds`.
  Read read_line(std::string& line, double timeout_seconds);

  /// How a child ended.
  struct Exit {
    bool exited = false;           ///< returned from main / called exit
    int code = 0;                  ///< exit code, when exited
    int signal = 0;                ///< the signal that killed it, otherwise
    std::string describe() const;  ///< "exit code 1", "killed by signal 11 (Segmentation fault)"
  };
  /// Waits for the child to end, at most `timeout_seconds` (negative: for ever).
  std::optional<Exit> wait(double timeout_seconds = -1);
  /// Sends SIGKILL (no effect once reaped).
  void kill();

 private:
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_;
  std::optional<Exit> exit_;
};

}  // namespace workbook
