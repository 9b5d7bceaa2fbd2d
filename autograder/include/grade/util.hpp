#pragma once
/// \file util.hpp
/// \brief Small helpers of the grader: files, command lines, patterns, escaping.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace workbook::grade {

namespace fs = std::filesystem;

/// The whole file; throws std::runtime_error naming the path when it cannot be read.
std::string read_text(const fs::path& path);
/// Writes atomically (a temporary file in the same folder, renamed into place), creating folders.
void write_text_atomic(const fs::path& path, const std::string& text);
nlohmann::json read_json(const fs::path& path);
/// j[key] when j has it, else an empty array: a reference, to loop over (also over .items()).
const nlohmann::json& items_of(const nlohmann::json& j, const char* key);
void write_json(const fs::path& path, const nlohmann::json& value);

/// Splits a command line the way /bin/sh would for the plain words CMake and Ninja write
/// (single and double quotes, backslashes). No expansion of any kind.
std::vector<std::string> split_command(std::string_view line);
/// Quotes a word for /bin/sh when it needs it.
std::string shell_quote(const std::string& word);

/// Shell-style pattern (fnmatch(3)): * any run of characters (/ too), ? one character, [...] a
/// class. The whole text must match.
bool glob_match(std::string_view pattern, std::string_view text);

std::string html_escape(std::string_view text);
/// Any bytes in, valid text out: what a student's process, a compiler or a file name gave, made
/// safe for JSON, Markdown, HTML and a terminal. Bytes that are not UTF-8 become U+FFFD; control
/// characters other than newline and tab are written as \xNN (no escape sequence, no NUL, no
/// carriage return reaches a report).
std::string valid_text(std::string_view bytes);
/// The value with every string and key made valid_text (nlohmann's dump() throws on invalid UTF-8).
nlohmann::json valid_json(const nlohmann::json& value);
/// RFC 4648 base64 with padding (data: URLs).
std::string base64(std::string_view bytes);
/// A CSV field, quoted when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);

/// "2026-11-22T13:36:59Z"
std::string utc_now();
/// A random hex string of `bytes` bytes from the kernel's generator.
std::string random_hex(std::size_t bytes);

/// True for a line the linker wrote about itself ("/usr/bin/ld: cannot find -lcuda", "ld.lld:
/// error: ...").
bool is_linker_line(std::string_view line);

/// The first lines of compiler or linker output that matter: errors with their context (the line
/// naming the missing symbol or file, not only collect2's "ld returned 1 exit status"), at most
/// `max_lines`.
std::string first_errors(const std::string& output, std::size_t max_lines = 30);

/// Replaces every occurrence of `from` in `text`.
std::string replace_all(std::string text, std::string_view from, std::string_view to);

/// The executable of this process.
fs::path self_executable();

/// The first executable `program` in the folders of PATH, as a path; empty when there is none.
std::string find_on_path(const std::string& program);
/// Whether `path` is `folder` or lies below it, component by component (both made lexically
/// normal: "/c/lib/../x" is below "/c"; "/cache2" is not below "/cache").
bool is_within(const fs::path& path, const fs::path& folder);

/// What a trusted tool printed (stdout and stderr together) and its exit code (-1: it did not exit
/// normally, or could not be started).
struct ToolOutput {
  int exit_code = -1;
  std::string output;
};
/// Runs a trusted tool of the machine (ldconfig, Slurm's commands) outside the sandbox, through
/// the shell with every argument quoted, and captures what it prints. Never for the student's code.
ToolOutput run_tool(const std::vector<std::string>& argv);

/// Copies a folder tree of regular files and symlinks.
void copy_tree(const fs::path& from, const fs::path& to);
/// Copies `files` (relative to `from`, e.g. project_files(from)) to the same places under `to`.
void copy_files(const fs::path& from, const std::vector<std::string>& files, const fs::path& to);

/// "lab01" from "01", and the two-digit number from a lab folder name "01_vectorized_relu".
std::string lab_name(const std::string& number);

}  // namespace workbook::grade
