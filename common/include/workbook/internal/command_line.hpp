#pragma once
/// \file internal/command_line.hpp
/// \brief Every entry point parses its command line the same way (CLI11): an unknown option, a
/// stray argument or a missing value is an error that names it (exit code 2); --help prints the
/// help (exit code 0).

#include <functional>
#include <optional>

#include <CLI/CLI.hpp>

namespace workbook {

/// The exit code of a command line that cannot be parsed.
inline constexpr int kUsageError = 2;

/// Parses argv into `app`'s options, then runs `check` (rules CLI11 cannot state, throwing
/// CLI::ParseError). Returns the exit code to stop with (0 after --help; kUsageError after an
/// error, printed with CLI11's message), or std::nullopt to go on.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv,
                                             const std::function<void()>& check = {}) {
  try {
    app.parse(argc, argv);
    if (check) check();
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageError;
  }
  return std::nullopt;
}

}  // namespace workbook
