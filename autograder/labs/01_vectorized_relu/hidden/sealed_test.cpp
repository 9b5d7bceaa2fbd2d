// Lab 01 hidden tests, sealed: each kernel runs in a worker process that holds the student's code;
// the inputs, the oracle and the verdict stay here. Beyond the visible tests, they check what a
// kernel could fake in its own process: outputs against inputs the kernel cannot have modified
// (the checker keeps a private copy), no write outside the output (canaries in shared memory), and
// no result kept from one call to the next (the same buffers, new values).
#include "vector_ops_oracle.hpp"

#include <grade/sealed.hpp>

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace {

using lab01::oracle::Binary;
using workbook::sealed::input;
using workbook::sealed::output;
using workbook::sealed::Region;
using workbook::sealed::Worker;

// Every tail of every SIMD width up to two AVX-512 batches and a half, then sizes the visible tests
// do not use, up to 64 Ki floats and a tail.
std::vector<std::size_t> sizes() {
  std::vector<std::size_t> s;
  for (std::size_t n = 0; n <= 40; ++n) s.push_back(n);
  for (std::size_t n : {63, 64, 65, 127, 128, 129, 1000, 4099, 65536 + 7}) s.push_back(n);
  return s;
}

std::vector<float> values(const workbook::Vector& v) {
  return {v.begin(), v.end()};
}

void put(Region<float>& r, const std::vector<float>& v) {
  std::copy(v.begin(), v.end(), r.data());
}

// An input the kernel must leave as it was (it takes it as a const span).
::testing::AssertionResult unchanged(const std::vector<float>& before, const Region<float>& after,
                                     const char* function, const char* name) {
  return workbook::testing::correct(
      workbook::check_unchanged(before, after.span(), lab01::oracle::where(function), name));
}

// --- relu ----------------------------------------------------------------------------------------

TEST(Relu, MatchesOracle) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (std::size_t n : sizes()) {
    worker.reset();
    const std::vector<float> x = values(workbook::normal(n, rng));
    Region<float> xr = worker.alloc<float>(n, n * 3 % 16),
                  yr = worker.alloc<float>(n, (n * 5 + 1) % 16);
    put(xr, x);
    ASSERT_CALL(worker.call("relu", {input(xr, "x"), output(yr, "y")})) << "n = " << n;
    ASSERT_CORRECT(lab01::oracle::check_relu(x, yr.copy())) << "n = " << n;
  }
}

TEST(Relu, SpecialValues) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> x = values(workbook::adversarial(4099, rng));
  Region<float> xr = worker.alloc<float>(x.size(), 1), yr = worker.alloc<float>(x.size(), 2);
  put(xr, x);
  ASSERT_CALL(worker.call("relu", {input(xr, "x"), output(yr, "y")}));
  EXPECT_CORRECT(lab01::oracle::check_relu(x, yr.copy()));
}

TEST(Relu, InPlace) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> x = values(workbook::normal(1031, rng));
  Region<float> xy = worker.alloc<float>(x.size(), 5);
  put(xy, x);
  ASSERT_CALL(worker.call("relu", {input(xy, "x"), input(xy, "y (the same buffer)")}));
  EXPECT_CORRECT(lab01::oracle::check_relu(x, xy.copy()));
}

TEST(Relu, LeavesInputUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> x = values(workbook::adversarial(2053, rng));
  Region<float> xr = worker.alloc<float>(x.size()), yr = worker.alloc<float>(x.size());
  put(xr, x);
  ASSERT_CALL(worker.call("relu", {input(xr, "x"), output(yr, "y")}));
  EXPECT_TRUE(unchanged(x, xr, "relu", "x"));
  EXPECT_CORRECT(lab01::oracle::check_relu(x, yr.copy()));
}

TEST(Relu, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Region<float> xr = worker.alloc<float>(777), yr = worker.alloc<float>(777);
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> x = values(workbook::normal(777, rng));
    put(xr, x);
    ASSERT_CALL(worker.call("relu", {input(xr, "x"), output(yr, "y")}));
    ASSERT_CORRECT(lab01::oracle::check_relu(x, yr.copy()))
        << "call " << round + 1
        << " on the same buffers with new values: a result kept from an earlier call?";
  }
}

TEST(Relu, RejectsMismatchedSizes) {
  Worker worker;
  Region<float> x = worker.alloc<float>(10), y = worker.alloc<float>(9);
  const auto reply = worker.call("relu", {input(x, "x"), output(y, "y")});
  EXPECT_EQ(reply.kind, "invalid_argument")
      << "relu(x of 10, y of 9) must throw std::invalid_argument; got: "
      << (reply.ok ? std::string("a normal return") : reply.message);
}

// --- add, multiply, squared_difference ---------------------------------------------------------

void binary_matches_oracle(Binary op) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (std::size_t n : sizes()) {
    worker.reset();
    const std::vector<float> a = values(workbook::normal(n, rng)),
                             b = values(workbook::normal(n, rng));
    Region<float> ar = worker.alloc<float>(n, n % 16), br = worker.alloc<float>(n, (n * 7) % 16),
                  out = worker.alloc<float>(n, (n * 3 + 2) % 16);
    put(ar, a);
    put(br, b);
    ASSERT_CALL(
        worker.call(lab01::oracle::name(op), {input(ar, "a"), input(br, "b"), output(out, "out")}))
        << "n = " << n;
    ASSERT_CORRECT(lab01::oracle::check_binary(op, a, b, out.copy())) << "n = " << n;
  }
}

void binary_special_values(Binary op) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> a = values(workbook::adversarial(4099, rng)),
                           b = values(workbook::adversarial(4099, rng));
  Region<float> ar = worker.alloc<float>(a.size()), br = worker.alloc<float>(b.size(), 3),
                out = worker.alloc<float>(a.size(), 1);
  put(ar, a);
  put(br, b);
  ASSERT_CALL(
      worker.call(lab01::oracle::name(op), {input(ar, "a"), input(br, "b"), output(out, "out")}));
  EXPECT_CORRECT(lab01::oracle::check_binary(op, a, b, out.copy()));
}

void binary_in_place(Binary op) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> a = values(workbook::normal(999, rng)),
                           b = values(workbook::normal(999, rng));
  Region<float> ar = worker.alloc<float>(a.size(), 3), br = worker.alloc<float>(b.size());
  put(ar, a);
  put(br, b);
  ASSERT_CALL(worker.call(lab01::oracle::name(op), {input(ar, "a"), input(br, "b"),
                                                    input(ar, "out (the same buffer as a)")}));
  EXPECT_CORRECT(lab01::oracle::check_binary(op, a, b, ar.copy()));
}

void binary_leaves_inputs_unchanged(Binary op) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> a = values(workbook::adversarial(2053, rng)),
                           b = values(workbook::normal(2053, rng));
  Region<float> ar = worker.alloc<float>(a.size()), br = worker.alloc<float>(b.size()),
                out = worker.alloc<float>(a.size());
  put(ar, a);
  put(br, b);
  const char* f = lab01::oracle::name(op);
  ASSERT_CALL(worker.call(f, {input(ar, "a"), input(br, "b"), output(out, "out")}));
  EXPECT_TRUE(unchanged(a, ar, f, "a"));
  EXPECT_TRUE(unchanged(b, br, f, "b"));
  EXPECT_CORRECT(lab01::oracle::check_binary(op, a, b, out.copy()));
}

void binary_fresh_results(Binary op) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Region<float> ar = worker.alloc<float>(555), br = worker.alloc<float>(555),
                out = worker.alloc<float>(555);
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> a = values(workbook::normal(555, rng)),
                             b = values(workbook::normal(555, rng));
    put(ar, a);
    put(br, b);
    ASSERT_CALL(
        worker.call(lab01::oracle::name(op), {input(ar, "a"), input(br, "b"), output(out, "out")}));
    ASSERT_CORRECT(lab01::oracle::check_binary(op, a, b, out.copy()))
        << "call " << round + 1
        << " on the same buffers with new values: a result kept from an earlier call?";
  }
}

void binary_rejects_mismatched_sizes(Binary op) {
  Worker worker;
  Region<float> a = worker.alloc<float>(8), b = worker.alloc<float>(7),
                out = worker.alloc<float>(8);
  const auto reply =
      worker.call(lab01::oracle::name(op), {input(a, "a"), input(b, "b"), output(out, "out")});
  EXPECT_EQ(reply.kind, "invalid_argument")
      << lab01::oracle::name(op) << "(a of 8, b of 7, out of 8) must throw "
      << "std::invalid_argument; got: "
      << (reply.ok ? std::string("a normal return") : reply.message);
}

TEST(Add, MatchesOracle) {
  binary_matches_oracle(Binary::add);
}
TEST(Add, SpecialValues) {
  binary_special_values(Binary::add);
}
TEST(Add, InPlace) {
  binary_in_place(Binary::add);
}
TEST(Add, LeavesInputsUnchanged) {
  binary_leaves_inputs_unchanged(Binary::add);
}
TEST(Add, FreshResultsEachCall) {
  binary_fresh_results(Binary::add);
}
TEST(Add, RejectsMismatchedSizes) {
  binary_rejects_mismatched_sizes(Binary::add);
}
TEST(Multiply, MatchesOracle) {
  binary_matches_oracle(Binary::multiply);
}
TEST(Multiply, SpecialValues) {
  binary_special_values(Binary::multiply);
}
TEST(Multiply, InPlace) {
  binary_in_place(Binary::multiply);
}
TEST(Multiply, LeavesInputsUnchanged) {
  binary_leaves_inputs_unchanged(Binary::multiply);
}
TEST(Multiply, FreshResultsEachCall) {
  binary_fresh_results(Binary::multiply);
}
TEST(Multiply, RejectsMismatchedSizes) {
  binary_rejects_mismatched_sizes(Binary::multiply);
}
TEST(SquaredDifference, MatchesOracle) {
  binary_matches_oracle(Binary::squared_difference);
}
TEST(SquaredDifference, SpecialValues) {
  binary_special_values(Binary::squared_difference);
}
TEST(SquaredDifference, InPlace) {
  binary_in_place(Binary::squared_difference);
}
TEST(SquaredDifference, LeavesInputsUnchanged) {
  binary_leaves_inputs_unchanged(Binary::squared_difference);
}
TEST(SquaredDifference, FreshResultsEachCall) {
  binary_fresh_results(Binary::squared_difference);
}
TEST(SquaredDifference, RejectsMismatchedSizes) {
  binary_rejects_mismatched_sizes(Binary::squared_difference);
}

// --- dot and euclidean_distance
// -------------------------------------------------------------------

// The reductions return a float; the worker sends it back bit for bit.
using Check = workbook::CheckResult (*)(std::span<const float>, std::span<const float>, float);
struct Reduction {
  const char* function;
  Check check;
};
const Reduction kDot{"dot", lab01::oracle::check_dot};
const Reduction kEuclidean{"euclidean_distance", lab01::oracle::check_euclidean};

void reduction_matches_oracle(const Reduction& r) {
  auto rng = workbook::testing::rng();
  Worker worker;
  std::vector<std::size_t> ns;
  for (std::size_t n = 0; n <= 100; ++n) ns.push_back(n);
  for (std::size_t n : {255, 256, 257, 4096, 4099, 100003}) ns.push_back(n);
  for (std::size_t n : ns) {
    worker.reset();
    const std::vector<float> a = values(workbook::normal(n, rng)),
                             b = values(workbook::normal(n, rng));
    Region<float> ar = worker.alloc<float>(n, n % 16), br = worker.alloc<float>(n, (n * 11) % 16);
    put(ar, a);
    put(br, b);
    const auto reply = worker.call(r.function, {input(ar, "a"), input(br, "b")});
    ASSERT_CALL(reply) << "n = " << n;
    ASSERT_CORRECT(r.check(a, b, static_cast<float>(reply.value()))) << "n = " << n;
  }
}

void reduction_propagates_nan_in_tail(const Reduction& r) {
  Worker worker;
  std::vector<float> a(37, 1.0f), b(37, 2.0f);
  a[36] = std::numeric_limits<float>::quiet_NaN();
  Region<float> ar = worker.alloc<float>(37), br = worker.alloc<float>(37);
  put(ar, a);
  put(br, b);
  const auto reply = worker.call(r.function, {input(ar, "a"), input(br, "b")});
  ASSERT_CALL(reply);
  EXPECT_TRUE(std::isnan(reply.value()))
      << r.function << " of 37 elements with a NaN in the last (tail) element gave "
      << reply.value() << ": the NaN must reach the result";
}

void reduction_leaves_inputs_unchanged(const Reduction& r) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> a = values(workbook::normal(3001, rng)),
                           b = values(workbook::normal(3001, rng));
  Region<float> ar = worker.alloc<float>(a.size(), 1), br = worker.alloc<float>(b.size(), 2);
  put(ar, a);
  put(br, b);
  const auto reply = worker.call(r.function, {input(ar, "a"), input(br, "b")});
  ASSERT_CALL(reply);
  EXPECT_TRUE(unchanged(a, ar, r.function, "a"));
  EXPECT_TRUE(unchanged(b, br, r.function, "b"));
  EXPECT_CORRECT(r.check(a, b, static_cast<float>(reply.value())));
}

void reduction_fresh_results(const Reduction& r) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Region<float> ar = worker.alloc<float>(1000), br = worker.alloc<float>(1000);
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> a = values(workbook::normal(1000, rng)),
                             b = values(workbook::normal(1000, rng));
    put(ar, a);
    put(br, b);
    const auto reply = worker.call(r.function, {input(ar, "a"), input(br, "b")});
    ASSERT_CALL(reply);
    ASSERT_CORRECT(r.check(a, b, static_cast<float>(reply.value())))
        << "call " << round + 1
        << " on the same buffers with new values: a result kept from an earlier call?";
  }
}

void reduction_rejects_mismatched_sizes(const Reduction& r) {
  Worker worker;
  Region<float> a = worker.alloc<float>(5), b = worker.alloc<float>(6);
  const auto reply = worker.call(r.function, {input(a, "a"), input(b, "b")});
  EXPECT_EQ(reply.kind, "invalid_argument")
      << r.function << "(a of 5, b of 6) must throw std::invalid_argument; got: "
      << (reply.ok ? std::string("a normal return") : reply.message);
}

TEST(Dot, MatchesOracle) {
  reduction_matches_oracle(kDot);
}
TEST(Dot, PropagatesNaNInTail) {
  reduction_propagates_nan_in_tail(kDot);
}
TEST(Dot, LeavesInputsUnchanged) {
  reduction_leaves_inputs_unchanged(kDot);
}
TEST(Dot, FreshResultsEachCall) {
  reduction_fresh_results(kDot);
}
TEST(Dot, RejectsMismatchedSizes) {
  reduction_rejects_mismatched_sizes(kDot);
}
TEST(EuclideanDistance, MatchesOracle) {
  reduction_matches_oracle(kEuclidean);
}
TEST(EuclideanDistance, PropagatesNaNInTail) {
  reduction_propagates_nan_in_tail(kEuclidean);
}
TEST(EuclideanDistance, LeavesInputsUnchanged) {
  reduction_leaves_inputs_unchanged(kEuclidean);
}
TEST(EuclideanDistance, FreshResultsEachCall) {
  reduction_fresh_results(kEuclidean);
}
TEST(EuclideanDistance, RejectsMismatchedSizes) {
  reduction_rejects_mismatched_sizes(kEuclidean);
}

}  // namespace
