#include <grade/util.hpp>

#include <workbook/report.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <fnmatch.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::grade {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text_atomic(const fs::path& path, const std::string& text) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  const fs::path temporary = path.string() + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) throw std::runtime_error("cannot write " + temporary.string());
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + temporary.string());
  }
  fs::rename(temporary, path);
}

nlohmann::json read_json(const fs::path& path) {
  try {
    return nlohmann::json::parse(read_text(path));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path.string() + " is not valid JSON: " + e.what());
  }
}

const nlohmann::json& items_of(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  return j.is_object() && j.contains(key) ? j[key] : empty;
}

void write_json(const fs::path& path, const nlohmann::json& value) {
  write_text_atomic(path, valid_json(value).dump(2) + "\n");
}

std::vector<std::string> split_command(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'') {
      in_word = true;
      for (++i; i < line.size() && line[i] != '\''; ++i) word += line[i];
    } else if (c == '"') {
      in_word = true;
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size() &&
            std::string_view("\"\\$`").find(line[i + 1]) != std::string_view::npos)
          ++i;
        word += line[i];
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      in_word = true;
      word += line[++i];
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      in_word = true;
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
          std::string::npos)
    return word;
  return "'" + replace_all(word, "'", "'\\''") + "'";
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // fnmatch(3) without FNM_PATHNAME: '*' crosses '/', as a rubric's test names and paths expect.
  return fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

std::string html_escape(std::string_view text) {
  return workbook::xml_escape(text);
}

std::string valid_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
        static const char* hex = "0123456789abcdef";
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // The length of a well-formed sequence (RFC 3629: no overlong forms, no surrogates, at most
    // U+10FFFF); anything else is one replaced byte.
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool ok = n > 0 && i + n <= s.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const unsigned char b = byte(i + k);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (ok) {
      // C1 control characters (U+0080..U+009F) are escaped like the C0 ones.
      if (c == 0xC2 && byte(i + 1) < 0xA0) {
        out += "\\u00";
        static const char* hex = "0123456789abcdef";
        out += hex[byte(i + 1) >> 4];
        out += hex[byte(i + 1) & 15];
      } else {
        out.append(s.substr(i, n));
      }
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

nlohmann::json valid_json(const nlohmann::json& v) {
  if (v.is_string()) return valid_text(v.get_ref<const std::string&>());
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : v) out.push_back(valid_json(e));
    return out;
  }
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, e] : v.items()) out[valid_text(k)] = valid_json(e);
    return out;
  }
  return v;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  return "\"" + replace_all(text, "\"", "\"\"") + "\"";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = getrandom(raw.data() + got, bytes - got, 0);
    if (n <= 0) throw std::runtime_error("getrandom failed");
    got += static_cast<std::size_t>(n);
  }
  std::string hex;
  char two[3];
  for (unsigned char c : raw) {
    std::snprintf(two, sizeof two, "%02x", c);
    hex += two;
  }
  return hex;
}

bool is_linker_line(std::string_view line) {
  // "<path>/ld: ...", "ld.bfd: ...", "ld.gold: ...", "ld.lld: ...", "mold: ...",
  // "<path>/x86_64-linux-gnu-ld: ..."
  const std::size_t colon = line.find(": ");
  if (colon == std::string_view::npos) return false;
  std::string_view tool = line.substr(0, colon);
  if (const std::size_t slash = tool.rfind('/'); slash != std::string_view::npos)
    tool = tool.substr(slash + 1);
  if (tool == "mold") return true;
  const std::size_t ld = tool.rfind("ld");
  if (ld == std::string_view::npos) return false;
  const std::string_view before = tool.substr(0, ld), after = tool.substr(ld + 2);
  const bool prefix_ok = before.empty() || before.back() == '-';
  const bool suffix_ok = after.empty() || after == ".bfd" || after == ".gold" || after == ".lld";
  return prefix_ok && suffix_ok;
}

std::string first_errors(const std::string& output, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // Start at the first line that reports an error: GCC, Clang and nvcc say "error:"; a linker names
  // itself ("/usr/bin/ld: cannot find -lcuda", "ld.lld: error: ...") and the missing symbol or
  // file. collect2's closing "ld returned 1 exit status" only repeats that a line before it said
  // why.
  std::size_t first = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (is_linker_line(l) ||
        (l.find("error:") != std::string::npos && l.find("collect2") == std::string::npos) ||
        l.find("error ") == 0 || l.find("undefined reference") != std::string::npos ||
        l.find("fatal error") != std::string::npos || l.rfind("CMake Error", 0) == 0) {
      first = i;
      break;
    }
  }
  if (first == lines.size()) {
    for (std::size_t i = 0; i < lines.size() && first == lines.size(); ++i)
      if (lines[i].find("error:") != std::string::npos) first = i;
  }
  if (first == lines.size()) first = 0;
  // Include the "In function ..." line just before the first error, when there is one.
  if (first > 0 && lines[first - 1].find("In ") != std::string::npos) --first;
  std::string out;
  for (std::size_t i = first; i < lines.size() && i < first + max_lines; ++i)
    out += lines[i] + "\n";
  if (lines.size() > first + max_lines)
    out += "[... " + std::to_string(lines.size() - first - max_lines) + " more lines]\n";
  return out;
}

std::string base64(std::string_view bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k)
      v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? digits[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  if (from.empty()) return text;
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

fs::path self_executable() {
  return fs::read_symlink("/proc/self/exe");
}

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (auto it = fs::recursive_directory_iterator(from); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path relative = it->path().lexically_relative(from);
    const fs::path target = to / relative;
    if (it->is_symlink()) {
      fs::remove(target);
      fs::copy_symlink(it->path(), target);
    } else if (it->is_directory()) {
      fs::create_directories(target);
    } else if (it->is_regular_file()) {
      fs::copy_file(it->path(), target, fs::copy_options::overwrite_existing);
    }
  }
}

void copy_files(const fs::path& from, const std::vector<std::string>& files, const fs::path& to) {
  for (const std::string& f : files) {
    fs::create_directories((to / f).parent_path());
    fs::copy_file(from / f, to / f, fs::copy_options::overwrite_existing);
  }
}

std::string lab_name(const std::string& number) {
  return "lab" + number;
}

ToolOutput run_tool(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) line += shell_quote(a) + " ";
  line += "2>&1";
  ToolOutput result;
  FILE* pipe = popen(line.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
    result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool is_within(const fs::path& path, const fs::path& folder) {
  const fs::path p = path.lexically_normal(), d = folder.lexically_normal();
  return std::mismatch(d.begin(), d.end(), p.begin(), p.end()).first == d.end();
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream folders(path ? path : "");
  for (std::string folder; std::getline(folders, folder, ':');) {
    const std::string candidate = folder + "/" + program;
    if (!folder.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace workbook::grade
