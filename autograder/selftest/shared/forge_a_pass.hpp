// Self-test submissions (lab02/03/04_forged_channel): the forgery of the grader's channel that
// each of them calls, as a real attacker would write it; copied into each one's lab folder by
// materialise.cmake (their base.json), and submitted beside the lab's own file as a helper header.
#pragma once

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
