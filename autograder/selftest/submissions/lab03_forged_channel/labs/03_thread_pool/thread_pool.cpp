// Self-test submission: the stub, plus a forgery of the grader's channel as a real attacker would
// write it. Every visible test makes a pool; the constructor, called inside the test, finds the
// grader's nonce in the process's memory, writes the records of a passed test on fd 3 and exits 0,
// so every visible test reports "passed" on the channel. Anywhere else (the sealed worker, the perf
// worker: no nonce there) it stays the stub and throws "not implemented": the hidden tests fail, so
// none of the forged passes is credited, and the lab earns nothing.
#include "thread_pool.hpp"

#include "relu_chunk.hpp"

#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <stdexcept>
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
// sealed worker, the perf worker: no nonce there) it returns.
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

namespace lab03 {

// --- Step 1: the pool ----------------------------------------------------------------------------

ThreadPool::ThreadPool(unsigned threads) {
  forge_a_pass();
  if (threads == 0) throw std::invalid_argument("ThreadPool: a pool needs at least one thread");
  // TODO(lab03) step 1: start `threads` workers, each running work():
  //   workers_.emplace_back([this] { work(); });
  // Then write work(), submit() and the destructor below: the tests need all four.
  throw workbook::NotImplemented("ThreadPool");
}

ThreadPool::~ThreadPool() {
  // TODO(lab03) step 1: set stopping_ (holding the mutex: why is in the handout), wake every worker
  // (work_available_.notify_all()), then join them (workers_.clear() joins each std::jthread).
  // Until you do, destroying a pool waits forever for workers that sleep on work_available_.
}

std::future<void> ThreadPool::submit(std::function<void()> task) {
  if (!task) throw std::invalid_argument("ThreadPool::submit: the task is an empty std::function");
  // TODO(lab03) step 1: wrap the task in a std::packaged_task<void()>, keep its get_future(), push
  // the packaged task onto queue_ while holding mutex_, wake one worker, return the future.
  throw workbook::NotImplemented("submit");
}

void ThreadPool::work() {
  // TODO(lab03) step 1: first `current_ = this;` (for is_worker_thread()). Then loop: wait on
  // work_available_ (with a predicate) until the queue has a task or the pool is stopping; leave
  // when it is stopping and the queue is empty; otherwise take the oldest task, release the mutex,
  // and run the task. Never run a task while holding the mutex.
  throw workbook::NotImplemented("work");
}

// --- Step 2: parallel_for ------------------------------------------------------------------------

void parallel_for([[maybe_unused]] ThreadPool& pool, Range range, std::size_t grain,
                  [[maybe_unused]] const std::function<void(Range)>& body) {
  if (grain == 0) throw std::invalid_argument("parallel_for: grain must be at least 1");
  if (range.end < range.begin)
    throw std::invalid_argument("parallel_for: the range ends before it begins");
  // TODO(lab03) step 2: split the range into chunks of `grain` (the last one shorter), submit one
  // task per chunk that calls body(chunk), and keep the futures. Wait for *all* of them before
  // looking at any result (a running chunk still uses `body`, which belongs to your caller), then
  // call get() on each in chunk order: the first one that rethrows is the lowest-numbered chunk
  // that failed. If pool.is_worker_thread(), run the chunks here instead, one after the other.
  throw workbook::NotImplemented("parallel_for");
}

// --- Step 3: parallel_relu -----------------------------------------------------------------------

void parallel_relu([[maybe_unused]] ThreadPool& pool, std::span<const float> x,
                   std::span<float> y) {
  workbook::require_elementwise("parallel_relu", x, "x", y, "y");
  // TODO(lab03) step 3: parallel_for over {0, x.size()} with a grain of your choice (the handout
  // discusses it), each chunk running relu_chunk(x.subspan(...), y.subspan(...), stores) with
  // stores = stores_for(y.size_bytes()), decided once for the whole output.
  throw workbook::NotImplemented("parallel_relu");
}

// --- Step 4: process_batch -----------------------------------------------------------------------

std::vector<Tensor> process_batch([[maybe_unused]] ThreadPool& pool,
                                  [[maybe_unused]] std::span<const Tensor> batch,
                                  const TensorOp& op) {
  if (!op) throw std::invalid_argument("process_batch: the operation is an empty std::function");
  // TODO(lab03) step 4: make a vector of batch.size() results, then parallel_for over the batch's
  // indices, each chunk computing results[i] = op(batch[i]) for its i. Return the results.
  throw workbook::NotImplemented("process_batch");
}

}  // namespace lab03
