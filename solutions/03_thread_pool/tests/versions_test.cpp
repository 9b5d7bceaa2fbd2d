// Every numbered version of lab 03 keeps the reference's guarantees: each chunk once, the lowest
// failing chunk's exception, the right results in input order. They differ only in speed.
#include "versions.hpp"

#include "batch_ops.hpp"
#include "lab03_testing.hpp"
#include "thread_pool_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using lab03::Range;
using lab03::ThreadPool;
using lab03::testing::Watchdog;

// The ways of running a parallel_for that the versions offer, on a pool of 3 threads.
using ParallelFor = std::function<void(Range, std::size_t, const std::function<void(Range)>&)>;
std::vector<std::pair<std::string, ParallelFor>> every_parallel_for(ThreadPool& pool) {
  return {{"v1 threads per call",
           [](Range r, std::size_t g, const auto& body) {
             lab03::versions::parallel_for_v1_threads(3, r, g, body);
           }},
          {"v2 task per chunk", [&pool](Range r, std::size_t g, const auto& body) {
             lab03::versions::parallel_for_v2_task_per_chunk(pool, r, g, body);
           }}};
}

TEST(Versions, EveryParallelForRunsEachIndexOnce) {
  Watchdog watchdog("the versions of parallel_for");
  ThreadPool pool(3);
  for (const auto& [name, parallel_for] : every_parallel_for(pool)) {
    for (const auto& [range, grain] : std::vector<std::pair<Range, std::size_t>>{
             {{0, 0}, 1}, {{0, 1}, 1}, {{0, 10}, 3}, {{5, 1005}, 7}, {{0, 20000}, 1}}) {
      std::vector<std::atomic<int>> counts(range.end);
      parallel_for(range, grain, [&](Range r) {
        for (std::size_t i = r.begin; i < r.end; ++i) counts[i].fetch_add(1);
      });
      for (std::size_t i = 0; i < range.end; ++i)
        ASSERT_EQ(counts[i].load(), i >= range.begin ? 1 : 0) << name << ", index " << i;
    }
  }
}

TEST(Versions, EveryParallelForRethrowsTheLowestFailingChunk) {
  Watchdog watchdog("the versions of parallel_for with failing chunks");
  ThreadPool pool(3);
  for (const auto& [name, parallel_for] : every_parallel_for(pool)) {
    std::atomic<int> ran{0};
    try {
      parallel_for({0, 50}, 1, [&](Range r) {
        ++ran;
        if (r.begin == 11 || r.begin == 40)
          throw std::runtime_error("chunk " + std::to_string(r.begin));
      });
      ADD_FAILURE() << name << " returned normally";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "chunk 11") << name;
    }
    EXPECT_EQ(ran.load(), 50) << name;
  }
}

TEST(Versions, ReluVersionsMatchTheOracle) {
  Watchdog watchdog("the versions of parallel_relu");
  auto rng = workbook::testing::rng();
  ThreadPool pool(2);
  for (std::size_t n : {0, 1, 17, 1000, (3 << 20) + 5}) {
    const workbook::Vector x = workbook::adversarial(n, rng);
    workbook::GuardedBuffer<float> y(n);
    lab03::versions::parallel_relu_v1_threads(2, workbook::as_span(x), y.span());
    ASSERT_CORRECT(lab03::oracle::check_relu(workbook::as_span(x), y)) << "v1, n = " << n;
    for (lab03::Stores stores : {lab03::Stores::ordinary, lab03::Stores::streaming}) {
      y.poison();
      lab03::versions::parallel_relu_with(pool, workbook::as_span(x), y.span(), 4096, stores);
      ASSERT_CORRECT(lab03::oracle::check_relu(workbook::as_span(x), y)) << "grain 4096, n = " << n;
    }
  }
}

TEST(Versions, ProcessBatchV2KeepsTheOrder) {
  Watchdog watchdog("process_batch v2");
  auto rng = workbook::testing::rng();
  const std::vector<lab03::Tensor> batch = lab03::ops::make_batch(50, 0, 2000, rng);
  ThreadPool pool(3);
  EXPECT_CORRECT(lab03::oracle::check_batch(
      lab03::versions::process_batch_v2_task_per_tensor(pool, batch, lab03::ops::polynomial),
      lab03::oracle::serial(batch, lab03::ops::polynomial)));
}

}  // namespace
