// The scenario of the sanitizer tests: pools created, given work, waited for and destroyed, again
// and again. Linked with wrong/racy_pool.cpp, ThreadSanitizer must report the race planted there
// (lab03.sanitizer.tsan_catches_planted_race); linked with the reference, it must report nothing
// (lab03.sanitizer.planted_race_scenario_clean_on_reference), which shows that the report comes
// from the planted bug and not from the scenario.
#include "thread_pool.hpp"

#include <atomic>
#include <cstdio>
#include <future>
#include <vector>

int main() {
  std::atomic<int> ran{0};
  for (int round = 0; round < 20; ++round) {
    lab03::ThreadPool pool(2);
    std::vector<std::future<void>> done;
    for (int i = 0; i < 100; ++i) done.push_back(pool.submit([&ran] { ++ran; }));
    for (std::future<void>& f : done) f.get();
  }  // each pool is destroyed here, its workers idle, waiting for work
  std::printf("planted_race: %d tasks ran\n", ran.load());
  return ran.load() == 20 * 100 ? 0 : 1;
}
