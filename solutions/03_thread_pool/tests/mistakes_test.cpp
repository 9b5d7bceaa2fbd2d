// Lab 03's catalogue of mistakes (labs/03_thread_pool/tests/thread_pool_mistakes.hpp), entry by
// entry: the output each mistake gives, built here as the buggy code builds it (one chunk after
// the other, as one worker runs them), must be named by the oracle's check as that mistake; the
// right output must pass; and an output that changes between two runs must be called a race.
// Then the perf advice (perf_evidence.hpp) on evidence made up for each case it tells apart.
#include "perf_evidence.hpp"
#include "thread_pool_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using lab03::Range;
using lab03::Tensor;
using workbook::GuardedBuffer;

constexpr std::size_t kGrain = 1000;

float relu(float x) {
  return x <= 0.0f ? 0.0f : x;  // NaN stays NaN
}

// x of n normal draws, and y poisoned, as a test of parallel_relu has them before the call.
struct Relu {
  workbook::Vector x;
  GuardedBuffer<float> y;
  explicit Relu(std::size_t n, bool adversarial = false) : y(n) {
    auto rng = workbook::testing::rng();
    x = adversarial ? workbook::adversarial(n, rng) : workbook::normal(n, rng);
  }
  std::span<const float> in() const { return workbook::as_span(x); }
  // body(chunk) for the chunks a parallel_for with `next` (the start of the chunk after [b, e))
  // hands out, one after the other.
  template <class Body, class Next>
  void chunks(Body body, Next next) {
    for (std::size_t b = 0; b < x.size(); b = next(b, std::min(b + kGrain, x.size())))
      body(Range{b, std::min(b + kGrain, x.size())});
  }
  workbook::CheckResult check(std::function<void()> run_again = {}) const {
    return lab03::oracle::check_relu(in(), y, "parallel_relu", std::move(run_again));
  }
};

std::size_t at_end(std::size_t, std::size_t e) {
  return e;
}

TEST(ThreadPoolMistakes, RightReluPasses) {
  Relu t(10007);
  t.chunks(
      [&](Range r) {
        for (std::size_t i = r.begin; i < r.end; ++i) t.y[i] = relu(t.x(i));
      },
      at_end);
  EXPECT_CORRECT(t.check());
}

TEST(ThreadPoolMistakes, NaNMappedToZero) {
  Relu t(3001, /*adversarial=*/true);
  for (std::size_t i = 0; i < t.x.size(); ++i) t.y[i] = std::max(0.0f, t.x(i));
  EXPECT_EQ(t.check().mistake, "ReLU with NaN mapped to 0 (x > 0 ? x : 0, or std::max(0.0f, x))");
}

TEST(ThreadPoolMistakes, ChunkEndsOneShort) {
  Relu t(10000);
  t.chunks(
      [&](Range r) {
        for (std::size_t i = r.begin; i < r.end - 1; ++i) t.y[i] = relu(t.x(i));
      },
      at_end);
  EXPECT_EQ(t.check().mistake,
            "chunks of 1000 whose last element is never written (each chunk ends at end - 1)");
}

TEST(ThreadPoolMistakes, NextChunkStartsAfterEnd) {
  Relu t(10000);
  t.chunks(
      [&](Range r) {
        for (std::size_t i = r.begin; i < r.end; ++i) t.y[i] = relu(t.x(i));
      },
      [](std::size_t, std::size_t e) { return e + 1; });
  EXPECT_EQ(t.check().mistake,
            "chunks of 1000 with one element skipped between each two (the next chunk starts at "
            "end + 1)");
}

TEST(ThreadPoolMistakes, ChunksReadXFromItsStart) {
  Relu t(10007);
  t.chunks(
      [&](Range r) {
        for (std::size_t i = r.begin; i < r.end; ++i) t.y[i] = relu(t.x(i - r.begin));
      },
      at_end);
  EXPECT_EQ(t.check().mistake,
            "every chunk of 1000 computed from the start of x (x.subspan(0, size))");
}

TEST(ThreadPoolMistakes, ChunksWriteYFromItsStart) {
  Relu t(10007);
  t.chunks(
      [&](Range r) {
        for (std::size_t i = r.begin; i < r.end; ++i) t.y[i - r.begin] = relu(t.x(i));
      },
      at_end);
  EXPECT_EQ(t.check().mistake,
            "every chunk of 1000 written to the start of y (y.subspan(0, size))");
}

TEST(ThreadPoolMistakes, AnOutputThatChangesIsARace) {
  // The first run leaves the last 5 elements unwritten, the second the last 3: a result that
  // depends on the timing of the threads.
  Relu t(4096);
  auto run = [&](std::size_t left_out) {
    t.y.poison();
    for (std::size_t i = 0; i + left_out < t.x.size(); ++i) t.y[i] = relu(t.x(i));
  };
  run(5);
  const workbook::CheckResult result = t.check([&] { run(3); });
  EXPECT_TRUE(result.unstable);
  EXPECT_NE(result.diagnosis.find("the output differs between two runs"), std::string::npos)
      << result.diagnosis;
  EXPECT_NE(result.diagnosis.find("ThreadSanitizer"), std::string::npos) << result.diagnosis;
}

// --- process_batch -------------------------------------------------------------------------------

struct Batch {
  std::vector<Tensor> batch, expected;
  std::vector<Tensor> results;
  explicit Batch(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      Tensor t(Tensor::shape_type{3});
      for (std::size_t j = 0; j < 3; ++j) t(j) = static_cast<float>(10 * i + j);
      batch.push_back(std::move(t));
    }
    expected = lab03::oracle::serial(batch, op);
    results.resize(count);
  }
  static Tensor op(const Tensor& t) { return Tensor(2.0f * t); }
  workbook::CheckResult check() const { return lab03::oracle::check_batch(results, expected); }
};

TEST(ThreadPoolMistakes, RemainderOfTheBatchDropped) {
  Batch t(10);
  for (std::size_t i = 0; i < 9; ++i) t.results[i] = Batch::op(t.batch[i]);  // 3 shares of 3
  EXPECT_EQ(t.check().mistake,
            "results for the first 9 of 10 tensors only (the remainder after the last full share "
            "dropped)");
}

TEST(ThreadPoolMistakes, OnlyTheFirstTensorOfEachChunk) {
  Batch t(10);
  for (std::size_t b = 0; b < 10; b += 4) t.results[b] = Batch::op(t.batch[b]);
  EXPECT_EQ(t.check().mistake, "only the first tensor of each chunk of 4 processed");
}

TEST(ThreadPoolMistakes, ChunkResultsStoredFromTheStart) {
  Batch t(10);
  for (std::size_t b = 0; b < 10; b += 4)
    for (std::size_t i = 0; i < std::min<std::size_t>(4, 10 - b); ++i)
      t.results[i] = Batch::op(t.batch[b + i]);
  EXPECT_EQ(t.check().mistake, "each chunk's results stored from results[0] (chunks of 4)");
}

TEST(ThreadPoolMistakes, ReservedInsteadOfSized) {
  Batch t(10);
  t.results.clear();
  const workbook::CheckResult result = t.check();
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.diagnosis.find("reserve()"), std::string::npos) << result.diagnosis;
}

TEST(ThreadPoolMistakes, RightBatchPasses) {
  Batch t(10);
  for (std::size_t i = 0; i < 10; ++i) t.results[i] = Batch::op(t.batch[i]);
  EXPECT_CORRECT(t.check());
}

// --- Perf advice from what the threads did ------------------------------------------------------

const lab03::evidence::About kRelu{.function = "parallel_relu",
                                   .roof = "the all-core copy roof",
                                   .own_speed = "chunks of at least 64 Ki floats."};

bool says(const std::vector<workbook::Hint>& hints, const std::string& text) {
  return std::any_of(hints.begin(), hints.end(), [&](const workbook::Hint& h) {
    return h.text.find(text) != std::string::npos;
  });
}

TEST(PerfEvidence, ThreadsStartedPerCallAreNamedAtAnySpeed) {
  // A fast call that still starts its own threads: said however close to the roof it is.
  const auto hints = lab03::evidence::hints(
      {.workers = 2, .threads_started = 2, .at_once = 2, .seconds = 0.05, .one_thread = 0.1},
      kRelu);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_GT(hints[0].below, 1.0);
  EXPECT_TRUE(says(hints, "2 threads were started")) << hints[0].text;
  EXPECT_TRUE(says(hints, "your parallel_relu starts threads of its own on every call"));
}

TEST(PerfEvidence, ChunksRunOneAtATime) {
  const auto hints = lab03::evidence::hints(
      {.workers = 2, .at_once = 1, .seconds = 0.1, .one_thread = 0.1}, kRelu);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_TRUE(says(hints, "never ran two chunks at once")) << hints[0].text;
  EXPECT_FALSE(says(hints, "is_worker_thread"));
}

TEST(PerfEvidence, ChunksThatNeverLeaveTheCallerAreToldTheInlinePathRan) {
  // A test of is_worker_thread() turned around: every call runs its chunks inline, serially.
  const auto hints = lab03::evidence::hints(
      {.workers = 2, .at_once = 1, .all_on_caller = true, .seconds = 0.1, .one_thread = 0.1},
      kRelu);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_TRUE(says(hints, "ran every chunk on the thread that called it")) << hints[0].text;
  EXPECT_TRUE(says(hints, "only when pool.is_worker_thread() is true"));
  EXPECT_FALSE(says(hints, "submit(...).get()"));
}

TEST(PerfEvidence, ThreadsThatRunTogetherButSlowEachOtherAreNotToldTheyRunOneAtATime) {
  // Chunks dealt out as i = t, t + T, ...: every thread runs, and the call is slower than on one.
  const auto hints = lab03::evidence::hints(
      {.workers = 2, .at_once = 3, .seconds = 0.3, .one_thread = 0.1}, kRelu);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_TRUE(says(hints, "the threads slow each other down")) << hints[0].text;
  EXPECT_TRUE(says(hints, "false sharing"));
  EXPECT_FALSE(says(hints, "never ran two chunks at once"));
}

TEST(PerfEvidence, ChunksThatStoreOrdinarilyAreToldToChooseOnceForTheWholeOutput) {
  // On one thread as slow as relu_chunk with ordinary stores, where streaming takes 0.7 of it.
  const auto hints = lab03::evidence::hints({.workers = 2,
                                             .at_once = 2,
                                             .seconds = 0.095,
                                             .one_thread = 0.1,
                                             .ordinary_one = 0.1,
                                             .streaming_one = 0.07},
                                            kRelu);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_TRUE(says(hints, "your chunks store ordinarily")) << hints[0].text;
  EXPECT_TRUE(says(hints, "stores_for(y.size_bytes())"));
  // Far slower than either (tiny chunks, say): told where the time goes, not about its stores.
  const auto slow = lab03::evidence::hints({.workers = 2,
                                            .at_once = 2,
                                            .seconds = 0.6,
                                            .one_thread = 0.672,
                                            .ordinary_one = 0.025,
                                            .streaming_one = 0.018},
                                           kRelu);
  EXPECT_FALSE(says(slow, "store ordinarily"));
  EXPECT_TRUE(says(slow, "27 times relu_chunk over the whole output")) << slow[0].text;
  EXPECT_TRUE(says(slow, "chunks far too small"));
  // As fast as streaming: not told.
  EXPECT_FALSE(says(lab03::evidence::hints({.workers = 2,
                                            .at_once = 2,
                                            .seconds = 0.065,
                                            .one_thread = 0.072,
                                            .ordinary_one = 0.1,
                                            .streaming_one = 0.07},
                                           kRelu),
                    "store ordinarily"));
}

TEST(PerfEvidence, AParallelCallGetsTheCasesOwnAdviceOnly) {
  // As the reference runs: all threads together, faster than on one; no cause is named.
  const auto hints = lab03::evidence::hints(
      {.workers = 2, .at_once = 2, .seconds = 0.06, .one_thread = 0.1}, kRelu);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_DOUBLE_EQ(hints[0].below, 0.85);
  EXPECT_TRUE(says(hints, "(speedup 1.67x over one thread): chunks of at least 64 Ki floats."))
      << hints[0].text;
  EXPECT_FALSE(says(hints, "never ran two chunks at once"));
  EXPECT_FALSE(says(hints, "slow each other down"));
}

}  // namespace
