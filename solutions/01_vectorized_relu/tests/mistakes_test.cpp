// Lab 01's catalogue of mistakes (labs/01_vectorized_relu/tests/vector_ops_mistakes.hpp), proved
// on the CPU: each wrong output, computed in float32 as the buggy code computes it, fails its
// check and is named by its entry; the right output passes.
#include "vector_ops_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using lab01::mistakes::kLanes;
using lab01::oracle::Binary;
using workbook::as_span;
using workbook::GuardedBuffer;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// x with NaN, +-inf and both signs, as the tests' special values have them.
std::vector<float> special_inputs() {
  auto rng = workbook::testing::rng();
  const workbook::Vector normal = workbook::normal(101, rng);
  std::vector<float> x(normal.begin(), normal.end());
  x[3] = kNaN;
  x[10] = -kNaN;
  x[20] = kInf;
  x[30] = -kInf;
  return x;
}

// The output of an elementwise kernel that computes f(i) in float32.
GuardedBuffer<float> output(std::size_t n, const std::function<float(std::size_t)>& f) {
  GuardedBuffer<float> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = f(i);
  return y;
}

TEST(Lab01Mistakes, Relu) {
  const std::vector<float> x = special_inputs();
  EXPECT_TRUE(lab01::oracle::check_relu(
      x, output(x.size(), [&](std::size_t i) { return x[i] <= 0 ? 0.0f : x[i]; })));
  const std::vector<std::pair<std::string, std::function<float(std::size_t)>>> cases = {
      {"a ReLU that turns NaN into 0", [&](std::size_t i) { return x[i] > 0 ? x[i] : 0.0f; }},
      {"min(x, 0): the negative values kept and the positive ones zeroed",
       [&](std::size_t i) { return x[i] > 0 ? 0.0f : x[i]; }},
      {"x * (x > 0), which makes -inf into NaN",
       [&](std::size_t i) { return x[i] * static_cast<float>(x[i] > 0); }},
  };
  for (const auto& [what, f] : cases) {
    const workbook::CheckResult r = lab01::oracle::check_relu(x, output(x.size(), f));
    EXPECT_FALSE(r.ok) << what;
    EXPECT_EQ(r.mistake, what) << r;
  }
}

TEST(Lab01Mistakes, BinaryOps) {
  auto rng = workbook::testing::rng();
  const workbook::Vector a = workbook::normal(77, rng), b = workbook::normal(77, rng);
  const auto as = as_span(a), bs = as_span(b);
  struct Case {
    Binary op;
    std::string what;
    std::function<float(std::size_t)> f;
  };
  const std::vector<Case> cases = {
      {Binary::add, "a + a: b is never read", [&](std::size_t i) { return a(i) + a(i); }},
      {Binary::multiply, "a * a: b is never read", [&](std::size_t i) { return a(i) * a(i); }},
      {Binary::multiply, "a + b in multiply", [&](std::size_t i) { return a(i) + b(i); }},
      {Binary::squared_difference, "a - b, not squared",
       [&](std::size_t i) { return a(i) - b(i); }},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(lab01::oracle::check_binary(c.op, as, bs, output(a.size(), [&](std::size_t i) {
                                              const float d = a(i) - b(i);
                                              return c.op == Binary::add        ? a(i) + b(i)
                                                     : c.op == Binary::multiply ? a(i) * b(i)
                                                                                : d * d;
                                            })));
    const workbook::CheckResult r =
        lab01::oracle::check_binary(c.op, as, bs, output(a.size(), c.f));
    EXPECT_FALSE(r.ok) << c.what;
    EXPECT_EQ(r.mistake, c.what) << r;
  }
}

// A float32 sum of term(i) as a one-accumulator SIMD loop with a scalar tail computes it: lane
// partial sums, reduced, then the tail. `tail_in_lanes` adds each tail term to every lane;
// `lane_zero_only` keeps lane 0 of the accumulator instead of adding all of them.
float simd_sum(std::size_t n, const std::function<float(std::size_t)>& term,
               bool tail_in_lanes = false, bool lane_zero_only = false) {
  std::vector<float> lanes(kLanes, 0.0f);
  const std::size_t full = n - n % kLanes;
  for (std::size_t i = 0; i < full; ++i) lanes[i % kLanes] += term(i);
  for (std::size_t i = full; i < n && tail_in_lanes; ++i)
    for (float& lane : lanes) lane += term(i);
  float sum = 0;
  for (std::size_t lane = 0; lane < (lane_zero_only ? 1 : kLanes); ++lane) sum += lanes[lane];
  for (std::size_t i = full; i < n && !tail_in_lanes; ++i) sum += term(i);
  return sum;
}

TEST(Lab01Mistakes, Dot) {
  auto rng = workbook::testing::rng();
  const std::size_t n = 4 * kLanes + 3;
  workbook::Vector a = workbook::normal(n, rng), b = workbook::normal(n, rng);
  a(0) = 2.0f;  // a first term that counts: one counted twice must show
  b(0) = 1.5f;
  const auto as = as_span(a), bs = as_span(b);
  auto product = [&](std::size_t i) { return a(i) * b(i); };
  EXPECT_TRUE(lab01::oracle::check_dot(as, bs, simd_sum(n, product)));
  const std::vector<std::pair<std::string, float>> cases = {
      {"the tail's products each counted " + std::to_string(kLanes) + " times (Batch::size)",
       simd_sum(n, product, true)},
      {"lane 0 of the accumulator, without the other " + std::to_string(kLanes - 1) + " lanes",
       simd_sum(n, product, false, true)},
      {"the sum with its first term counted twice", a(0) * b(0) + simd_sum(n, product)},
      {"only the last of the products", product(n - 1)},
      {"the sum of a[i] * a[i]: b is never read",
       simd_sum(n, [&](std::size_t i) { return a(i) * a(i); })},
  };
  for (const auto& [what, got] : cases) {
    const workbook::CheckResult r = lab01::oracle::check_dot(as, bs, got);
    EXPECT_FALSE(r.ok) << what;
    EXPECT_EQ(r.mistake, what) << r;
  }
}

TEST(Lab01Mistakes, EuclideanDistance) {
  auto rng = workbook::testing::rng();
  const std::size_t n = 4 * kLanes + 3;
  workbook::Vector a = workbook::normal(n, rng), b = workbook::normal(n, rng);
  a(0) = 2.0f;  // a first term that counts: one counted twice must show
  b(0) = -1.0f;
  const auto as = as_span(a), bs = as_span(b);
  auto square = [&](std::size_t i) {
    const float d = a(i) - b(i);
    return d * d;
  };
  EXPECT_TRUE(lab01::oracle::check_euclidean(as, bs, std::sqrt(simd_sum(n, square))));
  const std::vector<std::pair<std::string, float>> cases = {
      {"the tail's squared differences each counted " + std::to_string(kLanes) +
           " times (Batch::size)",
       std::sqrt(simd_sum(n, square, true))},
      {"lane 0 of the accumulator, without the other " + std::to_string(kLanes - 1) + " lanes",
       std::sqrt(simd_sum(n, square, false, true))},
      {"the sum with its first term counted twice", std::sqrt(square(0) + simd_sum(n, square))},
      {"only the last of the squared differences", std::sqrt(square(n - 1))},
      {"the sum of |a[i] - b[i]| (the Manhattan distance)",
       simd_sum(n, [&](std::size_t i) { return std::fabs(a(i) - b(i)); })},
  };
  for (const auto& [what, got] : cases) {
    const workbook::CheckResult r = lab01::oracle::check_euclidean(as, bs, got);
    EXPECT_FALSE(r.ok) << what;
    EXPECT_EQ(r.mistake, what) << r;
  }
}

// The loop's own mistakes, in any elementwise kernel (here relu): a tail indexed from 0 for its
// inputs or its output, and a step of two batches with one store.
TEST(Lab01Mistakes, ElementwiseLoop) {
  auto rng = workbook::testing::rng();
  const std::size_t n = 4 * kLanes + 3, full = 4 * kLanes;
  const workbook::Vector normal = workbook::normal(n, rng);
  std::vector<float> x(normal.begin(), normal.end());
  for (std::size_t i = 0; i < n; ++i) x[i] = std::fabs(x[i]) + float(i);  // all distinct, > 0
  auto relu = [&](std::size_t i) { return x[i] <= 0 ? 0.0f : x[i]; };
  struct Case {
    std::string what;
    GuardedBuffer<float> y;
  };
  std::vector<Case> cases;
  cases.push_back({"the tail computed from the first 3 inputs: out[" + std::to_string(full) +
                       " + j] from element j",
                   output(n, [&](std::size_t i) { return relu(i < full ? i : i - full); })});
  GuardedBuffer<float> at_start(n);
  for (std::size_t i = 3; i < full; ++i) at_start[i] = relu(i);
  for (std::size_t j = 0; j < 3; ++j) at_start[j] = relu(full + j);
  cases.push_back({"the tail's results stored at the start of the output, out[j] for element " +
                       std::to_string(full) + " + j",
                   std::move(at_start)});
  GuardedBuffer<float> stepped(n);
  for (std::size_t i = 0; i < n; ++i)
    if (i >= full || i % (2 * kLanes) < kLanes) stepped[i] = relu(i);
  cases.push_back({"one batch stored for every " + std::to_string(2 * kLanes) +
                       " elements: the loop steps by " + std::to_string(2 * kLanes) +
                       ", a batch holds " + std::to_string(kLanes),
                   std::move(stepped)});
  for (const Case& c : cases) {
    const workbook::CheckResult r = lab01::oracle::check_relu(x, c.y);
    EXPECT_FALSE(r.ok) << c.what;
    EXPECT_EQ(r.mistake, c.what) << r;
  }
}

// A write past the end is explained when its length is what a loop of whole batches leaves.
TEST(Lab01Mistakes, OverrunOfWholeBatches) {
  const std::size_t n = kLanes + 3;
  EXPECT_NE(lab01::mistakes::past_the_end(n, kLanes - 3).find("the SIMD loop runs while i < n."),
            std::string::npos);
  // A step of 4: the last batch starts at the last multiple of 4 with i + 4 <= n.
  const std::size_t last = (n - 4) / 4 * 4;
  EXPECT_NE(lab01::mistakes::past_the_end(n, last + kLanes - n)
                .find("a loop that steps by a lane count of 4 written"),
            std::string::npos);
  EXPECT_EQ(lab01::mistakes::past_the_end(n, 64), "");
  // Both at once (n = 4: one batch at 0 either way): both causes are named.
  EXPECT_NE(
      lab01::mistakes::past_the_end(4, kLanes - 4).find("or one that steps by a lane count of 4"),
      std::string::npos);
}

// The loop mistakes of a sum (dot): the tail from 0 to n or from 0 to n % lanes, lanes summed by
// hand up to a hard-coded count, and a step of two batches.
TEST(Lab01Mistakes, SumLoop) {
  auto rng = workbook::testing::rng();
  const std::size_t n = 4 * kLanes + 3, full = 4 * kLanes;
  const workbook::Vector a = workbook::normal(n, rng), b = workbook::normal(n, rng);
  const auto as = as_span(a), bs = as_span(b);
  auto product = [&](std::size_t i) { return a(i) * b(i); };
  auto partial = [&](auto keep) {
    std::vector<float> lanes(kLanes, 0.0f);
    for (std::size_t i = 0; i < full; ++i)
      if (keep(i)) lanes[i % kLanes] += product(i);
    float sum = 0;
    for (float lane : lanes) sum += lane;
    return sum;
  };
  float tail_from_zero = 0, first_three = 0;
  for (std::size_t i = 0; i < n; ++i) tail_from_zero += product(i);
  for (std::size_t i = 0; i < 3; ++i) first_three += product(i);
  float tail = 0;
  for (std::size_t i = full; i < n; ++i) tail += product(i);
  std::vector<std::pair<std::string, float>> cases = {
      {"the sum with the whole batches' products counted twice: the tail loop restarted at 0",
       partial([](std::size_t) { return true; }) + tail_from_zero},
      {"the first 3 products in place of the tail's: the tail loop indexed from 0",
       partial([](std::size_t) { return true; }) + first_three},
      {"every other batch of products left out: the loop steps by " + std::to_string(2 * kLanes) +
           ", a batch holds " + std::to_string(kLanes),
       partial([](std::size_t i) { return i % (2 * kLanes) < kLanes; }) + tail},
  };
  if (kLanes > 8)
    cases.push_back(
        {"lanes 0 to 7 of the accumulator's " + std::to_string(kLanes) + ", without the others",
         partial([](std::size_t i) { return i % kLanes < 8; }) + tail});
  for (const auto& [what, got] : cases) {
    const workbook::CheckResult r = lab01::oracle::check_dot(as, bs, got);
    EXPECT_FALSE(r.ok) << what;
    EXPECT_EQ(r.mistake, what) << r;
  }
}

// A tail never written is not "stored at the start" when the start's right values are the same
// as the tail's would be (ReLU of two negative inputs: 0 and 0).
TEST(Lab01Mistakes, MissingTailIsNotATailStoredAtTheStart) {
  const std::size_t n = kLanes + 1;
  std::vector<float> x(n, 1.0f);
  x[0] = -1.0f;
  x[kLanes] = -2.0f;
  GuardedBuffer<float> y(n);
  for (std::size_t i = 0; i < kLanes; ++i) y[i] = x[i] <= 0 ? 0.0f : x[i];
  const workbook::CheckResult r = lab01::oracle::check_relu(x, y);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mistake, "") << r;
}

}  // namespace
