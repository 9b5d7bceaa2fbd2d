#include <workbook/internal/code_location.hpp>
#include <workbook/internal/signal_safe_text.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

namespace workbook::testing::internal {
namespace {

// What prepare_code_location finds, read by the handler.
struct Executable {
  char addr2line[1024] = "";          // addr2line's path; "" when it is not installed
  char path[4096] = "";               // this executable
  std::uintptr_t base = 0;            // where it is loaded (a position-independent one moves)
  std::uintptr_t begin = 0, end = 0;  // its code and data, loaded
};
Executable executable;

int note_main_program(dl_phdr_info* info, std::size_t, void*) {
  // The first object is the executable itself.
  executable.base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const std::uintptr_t lo = info->dlpi_addr + segment.p_vaddr;
    const std::uintptr_t hi = lo + segment.p_memsz;
    if (executable.begin == 0 || lo < executable.begin) executable.begin = lo;
    if (hi > executable.end) executable.end = hi;
  }
  return 1;
}

bool in_executable(std::uintptr_t address) {
  return address >= executable.begin && address < executable.end;
}

// --- Parsing addr2line's output --------------------------------------------------------------

struct Piece {
  const char* at = "";
  std::size_t length = 0;
  bool contains(const char* s) const {
    const std::size_t n = std::strlen(s);
    for (std::size_t i = 0; i + n <= length; ++i)
      if (std::strncmp(at + i, s, n) == 0) return true;
    return false;
  }
};

// One function of a stack (an inlined call is one too): "pack_b", "labs/02_x/matmul.cpp", 87.
struct Entry {
  Piece function;
  Piece file;  // empty when unknown (a library's frame, or no line tables)
  std::size_t line = 0;
};

// Where the last "/labs/" or "/solutions/" of `file` starts, or file.length when it has none.
std::size_t lab_folder_at(Piece file) {
  std::size_t from = file.length;
  for (std::size_t i = 0; i + 1 < file.length; ++i)
    if (std::strncmp(file.at + i, "/labs/", 6) == 0 ||
        std::strncmp(file.at + i, "/solutions/", 11) == 0)
      from = i;
  return from;
}

// `file` opened for reading (its path is not NUL-ended where it lies), or -1.
int open_file(Piece file) {
  char path[4096];
  if (file.length + 1 > sizeof path) return -1;
  std::memcpy(path, file.at, file.length);
  path[file.length] = '\0';
  return open(path, O_RDONLY | O_CLOEXEC);
}

// A lab's source: the student's (labs/NN_x/) or a reference or mistake (solutions/NN_x/), but not
// the lab's tests, which call it. Judged on the path from the last labs/ or solutions/ on, so that
// a checkout under a folder named tests/ still counts.
bool in_lab_source(const Entry& e) {
  const std::size_t from = lab_folder_at(e.file);
  return from < e.file.length && !Piece{e.file.at + from, e.file.length - from}.contains("/tests/");
}

// "func at /path/file.cpp:87 (discriminator 2)", after an optional " (inlined by) ".
Entry parse_line(const char* line, std::size_t length) {
  Entry e;
  const char* inlined = " (inlined by) ";
  if (length >= std::strlen(inlined) && std::strncmp(line, inlined, std::strlen(inlined)) == 0) {
    line += std::strlen(inlined);
    length -= std::strlen(inlined);
  }
  const char* library = "[library] ";  // a frame outside the executable, named by dladdr
  if (length >= std::strlen(library) && std::strncmp(line, library, std::strlen(library)) == 0) {
    e.function = {line + std::strlen(library), length - std::strlen(library)};
    return e;
  }
  if (length >= 2 && std::strncmp(line, "??", 2) == 0) return e;  // addr2line knows nothing
  std::size_t at = length;                                        // the last " at "
  for (std::size_t i = 0; i + 4 <= length; ++i)
    if (std::strncmp(line + i, " at ", 4) == 0) at = i;
  if (at == length) {
    e.function = {line, length};
    return e;
  }
  e.function = {line, at};
  const char* location = line + at + 4;
  std::size_t rest = length - at - 4;
  for (std::size_t i = 0; i < rest; ++i)
    if (location[i] == ' ') rest = i;  // drops " (discriminator 2)"
  std::size_t colon = rest;
  for (std::size_t i = 0; i < rest; ++i)
    if (location[i] == ':') colon = i;
  if (colon == rest || (colon == 2 && location[0] == '?')) return e;
  e.file = {location, colon};
  for (std::size_t i = colon + 1; i < rest && location[i] >= '0' && location[i] <= '9'; ++i)
    e.line = e.line * 10 + static_cast<std::size_t>(location[i] - '0');
  return e;
}

// The name a student knows: "void std::fill<float*, float>(float*, float*, float const&)" reads
// "std::fill"; "workbook::lab02::(anonymous namespace)::pack_b(float const*, ...)" reads "pack_b".
void write_name(Text& t, Piece name) {
  char plain[512];
  std::size_t n = 0;
  int depth = 0;
  bool lambda = false;
  for (std::size_t i = 0; i < name.length && n + 1 < sizeof plain; ++i) {
    const char c = name.at[i];
    if (std::strncmp(name.at + i, "(anonymous namespace)::", 23) == 0) {
      i += 22;
      continue;
    }
    if (c == '<') ++depth;
    if (depth == 0 && c == '(') {
      lambda = Piece{name.at + i, name.length - i}.contains("{lambda");
      break;
    }
    if (depth == 0) plain[n++] = c;
    if (c == '>' && depth > 0) --depth;
  }
  plain[n] = '\0';
  const char* start = plain;
  for (const char* p = plain; *p; ++p)
    if (*p == ' ') start = p + 1;  // the return type
  for (const char* prefix : {"workbook::", "__cxx11::"})
    if (std::strncmp(start, prefix, std::strlen(prefix)) == 0) start += std::strlen(prefix);
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (std::strncmp(start, "lab", 3) == 0 && digit(start[3]) && digit(start[4]) &&
      std::strncmp(start + 5, "::", 2) == 0)
    start += 7;  // "lab02::"
  t << start;
  if (lambda) t << " (a lambda in it)";
}

// A path from its labs/ or solutions/ folder on: "labs/02_cache_blocked_matmul/matmul.cpp".
void write_path(Text& t, Piece file) {
  const std::size_t at = lab_folder_at(file);
  const std::size_t from = at < file.length ? at + 1 : 0;  // from "labs/" on, or the whole path
  t.write(file.at + from, file.length - from);
}

// Line `number` of `file`, with the lines before it that its statement starts on (line tables
// give a call's last line: `throw std::invalid_argument("x[" + ...` may end two lines further);
// nothing when the file cannot be read.
void write_source_lines(Text& t, Piece file, std::size_t number) {
  if (number == 0) return;
  const int fd = open_file(file);
  if (fd < 0) return;
  constexpr std::size_t kBefore = 3, kWidth = 200;
  static char lines[kBefore + 1][kWidth];  // lines number - 3 .. number
  std::size_t lengths[kBefore + 1] = {};
  static char chunk[1 << 16];
  const std::size_t first = number > kBefore ? number - kBefore : 1;
  std::size_t current = 1;
  bool done = false;
  for (ssize_t got; !done && (got = read(fd, chunk, sizeof chunk)) > 0;) {
    for (ssize_t i = 0; i < got && !done; ++i) {
      if (chunk[i] == '\n') {
        done = current == number;
        ++current;
        continue;
      }
      if (current < first) continue;
      const std::size_t k = current - first;
      if (lengths[k] + 1 < kWidth) lines[k][lengths[k]++] = chunk[i];
    }
  }
  close(fd);
  if (current < number) return;  // the file is shorter: not the source that was built
  // The statement starts after the last earlier line that ends one (;, { or }), or a comment.
  auto indent = [&](std::size_t k) {
    std::size_t i = 0;
    while (i < lengths[k] && (lines[k][i] == ' ' || lines[k][i] == '\t')) ++i;
    return i;
  };
  std::size_t from = number - first;
  while (from > 0) {
    const std::size_t n = lengths[from - 1];
    const char last = n ? lines[from - 1][n - 1] : ';';
    const char* text = lines[from - 1] + indent(from - 1);
    if (last == ';' || last == '{' || last == '}' || (text[0] == '/' && text[1] == '/')) break;
    --from;
  }
  // Shown with their own indentation, less what they all share.
  std::size_t shared = kWidth;
  for (std::size_t k = from; k <= number - first; ++k)
    if (indent(k) < lengths[k] && indent(k) < shared) shared = indent(k);
  for (std::size_t k = from; k <= number - first; ++k) {
    lines[k][lengths[k]] = '\0';
    t << "      " << first + k << " | " << lines[k] + (shared < lengths[k] ? shared : lengths[k])
      << "\n";
  }
}

// The line of `file` nearest `near` that holds a piece of the exception's text `thrown` (its
// longest run of 10 or more characters without a digit: a number in it was formatted at run
// time), 0 when none does.
std::size_t throw_with_text(Piece file, std::size_t near, const char* thrown) {
  std::size_t best_from = 0, best_length = 0;
  for (std::size_t i = 0, from = 0;; ++i) {
    const char c = thrown[i];
    if (c == '\0' || (c >= '0' && c <= '9') || c == '"') {
      if (i - from > best_length) best_from = from, best_length = i - from;
      from = i + 1;
    }
    if (c == '\0') break;
  }
  if (best_length < 10 || best_length > 200) return 0;
  const char* piece = thrown + best_from;
  const int fd = open_file(file);
  if (fd < 0) return 0;
  static char chunk[1 << 16];
  static char line[1024];
  std::size_t length = 0, number = 1, found = 0;
  auto consider = [&] {
    line[length] = '\0';
    for (std::size_t i = 0; i + best_length <= length; ++i)
      if (std::strncmp(line + i, piece, best_length) == 0) {
        const std::size_t distance = number > near ? number - near : near - number;
        const std::size_t best = found > near ? found - near : near - found;
        if (found == 0 || distance < best) found = number;
        break;
      }
  };
  for (ssize_t got; (got = read(fd, chunk, sizeof chunk)) > 0;)
    for (ssize_t i = 0; i < got; ++i) {
      if (chunk[i] == '\n') {
        consider();
        ++number;
        length = 0;
      } else if (length + 1 < sizeof line) {
        line[length++] = chunk[i];
      }
    }
  consider();
  close(fd);
  return found;
}

bool from_library(const Entry& e) {
  return e.file.length == 0 || e.file.contains("/usr/") || e.file.contains("/include/c++/");
}

// --- Running addr2line -----------------------------------------------------------------------

void write_address(char* out, std::size_t capacity, std::uintptr_t address) {
  Text t(out, capacity);
  t.hex(address);
  t.finish();
}

// Runs addr2line on `count` addresses of the executable; its output into `out`, NUL-ended.
std::size_t run_addr2line(const std::uintptr_t* addresses, int count, char* out,
                          std::size_t capacity) {
  if (!*executable.addr2line || count == 0 || capacity == 0) return 0;
  static char numbers[Stack::kCapacity][24];
  const char* argv[Stack::kCapacity + 8];
  int a = 0;
  for (const char* arg : {"addr2line", "-C", "-f", "-i", "-p", "-e"}) argv[a++] = arg;
  argv[a++] = executable.path;
  for (int i = 0; i < count; ++i) {
    write_address(numbers[i], sizeof numbers[i], addresses[i]);
    argv[a++] = numbers[i];
  }
  argv[a] = nullptr;
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return 0;
  const pid_t child = vfork();  // no fork handlers, no copy: safe in a signal handler
  if (child == 0) {
    dup2(pipe_ends[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    close(pipe_ends[0]);
    execve(executable.addr2line, const_cast<char* const*>(argv), environ);
    _exit(127);
  }
  close(pipe_ends[1]);
  std::size_t length = 0;
  if (child > 0) {
    // At most 10 s: a report that never comes would be worse than one without its line.
    timespec start{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    pollfd wait_for{pipe_ends[0], POLLIN, 0};
    for (;;) {
      timespec now{};
      clock_gettime(CLOCK_MONOTONIC, &now);
      const long left_ms =
          10000 - ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000);
      if (left_ms <= 0 || poll(&wait_for, 1, static_cast<int>(left_ms)) <= 0) {
        kill(child, SIGKILL);
        break;
      }
      const ssize_t got = read(pipe_ends[0], out + length, capacity - 1 - length);
      if (got <= 0) break;
      length += static_cast<std::size_t>(got);
      if (length + 1 >= capacity) break;
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) length = 0;
  }
  close(pipe_ends[0]);
  out[length] = '\0';
  return length;
}

// A library function's plain name from dladdr ("__memset_avx512_unaligned_erms" reads "memset",
// "pthread_cond_wait" itself); "" for a C++ name (mangled) or none.
void library_name(std::uintptr_t address, char* out, std::size_t capacity) {
  out[0] = '\0';
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(address), &info) == 0 || !info.dli_sname) return;
  const char* name = info.dli_sname;
  if (std::strncmp(name, "_Z", 2) == 0) return;
  while (*name == '_') ++name;
  std::size_t n = 0;
  while (name[n] && n + 1 < capacity) {
    // The C library's variants for one instruction set: the function is the part before.
    bool variant = false;
    for (const char* suffix : {"_avx", "_sse", "_evex", "_erms", "_unaligned"})
      variant = variant || std::strncmp(name + n, suffix, std::strlen(suffix)) == 0;
    if (variant) break;
    out[n] = name[n];
    ++n;
  }
  out[n] = '\0';
}

// --- Another thread's stack, on request -------------------------------------------------------

std::atomic<pid_t> stack_asked_of{0};
std::atomic<bool> stack_answered{false};
Stack stack_answer;

void on_stack_request(int) {
  if (static_cast<pid_t>(syscall(SYS_gettid)) != stack_asked_of.load()) return;
  stack_answer = capture_stack(1);  // less this handler
  stack_answered.store(true, std::memory_order_release);
}

}  // namespace

extern const bool kThrowSiteLinked;  // throw_site.cpp

void prepare_code_location() {
  // (Names throw_site.cpp's flag, so that its wrapper of __cxa_throw is linked too.)
  [[maybe_unused]] volatile bool wrapped = kThrowSiteLinked;
  const ssize_t length = readlink("/proc/self/exe", executable.path, sizeof executable.path - 1);
  executable.path[length > 0 ? length : 0] = '\0';
  dl_iterate_phdr(note_main_program, nullptr);
  // addr2line from PATH, found now: a handler should not search.
  if (const char* path = std::getenv("PATH")) {
    for (const char* dir = path; *dir;) {
      const char* end = std::strchr(dir, ':');
      const std::size_t n = end ? static_cast<std::size_t>(end - dir) : std::strlen(dir);
      char candidate[sizeof executable.addr2line];
      Text t(candidate, sizeof candidate);
      t.write(dir, n) << "/addr2line";
      t.finish();
      if (n > 0 && access(candidate, X_OK) == 0) {
        std::memcpy(executable.addr2line, candidate, sizeof candidate);
        break;
      }
      if (!end) break;
      dir = end + 1;
    }
  }
  void* warm[2];
  backtrace(warm, 2);  // loads libgcc's unwinder now, not in a handler
}

// Never inlined: `skip` counts frames, this one among them.
[[gnu::noinline]] Stack capture_stack(int skip) {
  Stack s;
  void* frames[Stack::kCapacity + 8];
  const int count = backtrace(frames, Stack::kCapacity + 8);
  for (int i = skip + 1; i < count && s.count < Stack::kCapacity; ++i)  // +1: this function
    s.frames[s.count++] = frames[i];
  return s;
}

Stack stack_of_thread(pid_t tid, std::chrono::milliseconds patience) {
  static std::mutex one_at_a_time;
  const std::lock_guard lock(one_at_a_time);
  static const int request = [] {
    const int signal = SIGRTMIN + 4;  // glibc keeps the first two for itself
    struct sigaction action {};
    action.sa_handler = on_stack_request;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, nullptr);
    return signal;
  }();
  stack_answered.store(false);
  stack_asked_of.store(tid);
  Stack s;
  if (syscall(SYS_tgkill, getpid(), tid, request) == 0) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (!stack_answered.load(std::memory_order_acquire) &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (stack_answered.load(std::memory_order_acquire)) s = stack_answer;
  }
  stack_asked_of.store(0);
  return s;
}

Stack stack_at_fault(std::uintptr_t fault_pc) {
  Stack s;
  s.first_is_exact = true;
  s.frames[s.count++] = reinterpret_cast<void*>(fault_pc);
  void* frames[Stack::kCapacity + 8];
  const int count = backtrace(frames, Stack::kCapacity + 8);
  // The unwinder passes the handler's frames and the signal's trampoline, then reaches the
  // faulting instruction itself; the callers follow it.
  int from = count;
  for (int i = 0; i < count; ++i)
    if (reinterpret_cast<std::uintptr_t>(frames[i]) == fault_pc) from = i + 1;
  for (int i = from; i < count && s.count < Stack::kCapacity; ++i) s.frames[s.count++] = frames[i];
  return s;
}

std::size_t describe_code_location(const Stack& stack, const char* verb, char* out,
                                   std::size_t capacity, bool* innermost, const char* thrown) {
  if (capacity == 0) return 0;
  out[0] = '\0';
  std::uintptr_t addresses[Stack::kCapacity];
  int count = 0;
  for (int i = 0; i < stack.count; ++i) {
    const auto address = reinterpret_cast<std::uintptr_t>(stack.frames[i]);
    const bool exact = i == 0 && stack.first_is_exact;
    if (in_executable(address)) addresses[count++] = address - executable.base - (exact ? 0 : 1);
  }
  static char raw[1 << 15];
  if (run_addr2line(addresses, count, raw, sizeof raw) == 0) return 0;
  // The frames in order, a library's frame as "[library] name", each executable frame as its group
  // of lines (a line not starting " (inlined by)" starts the next one).
  static char symbols[1 << 15];
  Text merged(symbols, sizeof symbols);
  const char* cursor = raw;
  for (int i = 0; i < stack.count; ++i) {
    const auto address = reinterpret_cast<std::uintptr_t>(stack.frames[i]);
    if (!in_executable(address)) {
      char name[64];
      library_name(address, name, sizeof name);
      merged << "[library] " << name << "\n";
      continue;
    }
    bool first = true;
    while (*cursor) {
      const char* end = std::strchr(cursor, '\n');
      const std::size_t n = end ? static_cast<std::size_t>(end - cursor) : std::strlen(cursor);
      if (!first && std::strncmp(cursor, " (inlined by) ", 14) != 0) break;
      merged.write(cursor, n) << "\n";
      first = false;
      cursor = end ? end + 1 : cursor + n;
    }
  }
  merged.finish();
  return describe_symbolized(symbols, verb, out, capacity, innermost, thrown);
}

std::size_t describe_symbolized(const char* symbols, const char* verb, char* out,
                                std::size_t capacity, bool* innermost, const char* thrown) {
  static Entry entries[4 * Stack::kCapacity];
  std::size_t count = 0;
  for (const char* cursor = symbols; *cursor && count < sizeof entries / sizeof entries[0];) {
    const char* end = std::strchr(cursor, '\n');
    const std::size_t n = end ? static_cast<std::size_t>(end - cursor) : std::strlen(cursor);
    if (n > 0) entries[count++] = parse_line(cursor, n);
    cursor = end ? end + 1 : cursor + n;
  }
  std::size_t yours = count;
  for (std::size_t i = 0; i < count && yours == count; ++i)
    if (in_lab_source(entries[i])) yours = i;
  Text t(out, capacity);
  if (yours == count) return t.finish();
  if (innermost) *innermost = yours == 0;
  const Entry& e = entries[yours];
  // The lab's own throw: the one whose text the exception carries, where the line tables point at
  // another of the function's throws (merged into one call by the optimiser).
  std::size_t line = e.line;
  if (thrown && yours == 0)
    if (const std::size_t matching = throw_with_text(e.file, e.line, thrown)) line = matching;
  t << "  It " << verb << " at ";
  write_path(t, e.file);
  t << ":" << line << ", in ";
  write_name(t, e.function);
  // What that line called, where the fault or the wait lies in a library: the function the line
  // calls (std::fill, std::vector::clear) and, when another, the innermost one named (memset,
  // std::jthread::join). A header's code inlined without its own name carries the caller's.
  auto named_library = [&](std::size_t i) {
    const Entry& c = entries[i];
    return from_library(c) && c.function.length > 0 &&
           !(c.function.length == e.function.length &&
             std::strncmp(c.function.at, e.function.at, c.function.length) == 0);
  };
  // (An implementation's own helper, std::vector::_M_range_check or std::__fill_a1, is no name
  // a student knows: the innermost named is the innermost public one.)
  auto implementation_detail = [&](std::size_t i) {
    const Piece& f = entries[i].function;
    for (std::size_t k = 0; k + 3 <= f.length && f.at[k] != '('; ++k)
      if (std::strncmp(f.at + k, "::_", 3) == 0) return true;
    return false;
  };
  std::size_t outer = yours, inner = yours;
  for (std::size_t i = yours; i-- > 0;)
    if (named_library(i)) {
      if (outer == yours) outer = i;
      if (!implementation_detail(i)) inner = i;
    }
  if (inner == yours) inner = outer;
  if (outer != yours) {
    t << " (inside ";
    write_name(t, entries[outer].function);
    t << ", which this line calls";
    if (inner != outer) {
      t << ": in ";
      write_name(t, entries[inner].function);
    }
    t << ")";
  }
  t << ":\n";
  write_source_lines(t, e.file, line);
  // The lab's line that called it, where that is another function of the lab (an argument check
  // that threw: the caller passed the value).
  for (std::size_t i = yours + 1; i < count; ++i) {
    const Entry& c = entries[i];
    if (!in_lab_source(c)) continue;
    if (c.function.length == e.function.length &&
        std::strncmp(c.function.at, e.function.at, c.function.length) == 0)
      continue;
    t << "  called from ";
    write_name(t, c.function);
    t << " at ";
    write_path(t, c.file);
    t << ":" << c.line << ":\n";
    write_source_lines(t, c.file, c.line);
    break;
  }
  return t.finish();
}

namespace {
std::mutex throw_mutex;
Stack thrown_at;
}  // namespace

void record_throw_site() {
  Stack stack = capture_stack(2);  // less this function and the __cxa_throw that calls it
  const std::lock_guard lock(throw_mutex);
  thrown_at = stack;
}

Stack last_throw() {
  const std::lock_guard lock(throw_mutex);
  return thrown_at;
}

void clear_last_throw() {
  const std::lock_guard lock(throw_mutex);
  thrown_at = Stack{};
}

}  // namespace workbook::testing::internal
