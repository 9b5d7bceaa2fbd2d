#include <workbook/internal/compiler_warnings.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

namespace workbook::testing::internal {

namespace {

// "/home/s/wb/labs/03_thread_pool/thread_pool.cpp:64:20: warning: ..." reads from labs/ on; ""
// for a warning about another file (a header of the harness or of a lab's tests, which the student
// does not edit).
std::string from_lab_folder(const std::string& line) {
  const std::string file = line.substr(0, line.find(": warning: "));
  std::size_t at = std::string::npos;
  for (const char* folder : {"/labs/", "/solutions/"})
    if (const std::size_t i = file.rfind(folder);
        i != std::string::npos && (at == std::string::npos || i > at))
      at = i;
  // (Judged from there on: a checkout under a folder named tests/ is still the student's.)
  if (at == std::string::npos || file.find("/tests/", at) != std::string::npos) return "";
  return line.substr(at + 1);
}

}  // namespace

std::string compiler_warnings(std::size_t most) {
  const char* dir = std::getenv("WORKBOOK_WARNINGS_DIR");
  if (!dir || !*dir) return "";
  std::error_code error;
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error))
    if (it->path().extension() == ".warnings") files.push_back(it->path());
  std::sort(files.begin(), files.end());
  // GCC's and Clang's layout: the warning, then the source line ("   64 |   if (...)") and a caret.
  static const std::regex source_line(R"(^ *[0-9]+ \| .*)");
  // A header's warning comes once per file that includes it: each is shown once, with its source
  // line from whichever file has it.
  std::vector<std::pair<std::string, std::string>> warnings;  // the warning, its source line
  for (const auto& file : files) {
    std::ifstream in(file);
    std::size_t last = warnings.size();  // the warning a source line belongs to, if any
    for (std::string line; std::getline(in, line);) {
      if (line.find(": warning: ") != std::string::npos) {
        const std::string shown = from_lab_folder(line);
        if (shown.empty()) {
          last = warnings.size();
          continue;
        }
        last = std::find_if(warnings.begin(), warnings.end(),
                            [&](const auto& w) { return w.first == shown; }) -
               warnings.begin();
        if (last == warnings.size()) {
          if (warnings.size() >= most) continue;
          warnings.push_back({shown, ""});
        }
      } else if (last < warnings.size() && std::regex_match(line, source_line)) {
        if (warnings[last].second.empty()) warnings[last].second = line;
        last = warnings.size();
      }
    }
  }
  std::string text;
  for (const auto& [warning, source] : warnings)
    text += warning + "\n" + (source.empty() ? "" : source + "\n");
  return text;
}

std::string compiler_warnings_report() {
  const std::string warnings = compiler_warnings();
  if (warnings.empty()) return "";
  std::string text =
      "  Your compiler warned about your code when it built it (a warning is often the mistake "
      "itself):\n";
  std::size_t from = 0;
  while (from < warnings.size()) {
    const std::size_t end = warnings.find('\n', from);
    text += "    " + warnings.substr(from, end - from) + "\n";
    from = end + 1;
  }
  return text;
}

}  // namespace workbook::testing::internal
