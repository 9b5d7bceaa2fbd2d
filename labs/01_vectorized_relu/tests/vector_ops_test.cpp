// Lab 01 visible tests: every function against a float64 oracle, at every size that exercises a
// tail, on unaligned starts, in place, and on special values (NaN, infinities, denormals, +-0).
// Each TEST below is its own ctest test: `ctest --preset lab01 -R Relu` runs the ReLU ones.
#include "vector_ops.hpp"
#include "vector_ops_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using lab01::oracle::Binary;
using workbook::as_span;
using workbook::GuardedBuffer;
using workbook::testing::Cases;

// Sizes 0..67 reach past four batches of 16 (AVX-512), so every tail length of every SIMD width
// is tried, plus a few large ones, the largest past 8 MiB of output (where a loop may switch to
// streaming stores, as the reference does). A test checks them all, then reports its most telling
// failure (workbook::testing::Cases): the smallest sizes look alike whatever the mistake.
std::vector<std::size_t> sizes_with_every_tail() {
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 67; ++n) sizes.push_back(n);
  for (std::size_t n : {255, 256, 257, 1000, 4099, (1 << 20) + 13, (1 << 21) + 13})
    sizes.push_back(n);
  return sizes;
}

// Fails the test unless `call` throws std::invalid_argument, as it must for arguments that break
// `function`'s contract; `call_text` shows the call and `wrong` the one thing wrong with its
// arguments (each rejection test breaks one thing at a time, so a check that leaves one argument
// out is named).
template <class Call>
void expect_rejected(const char* function, Call call, const std::string& call_text,
                     const std::string& wrong) {
  const std::string edit =
      " Edit " + lab01::oracle::where(function).file + " (" + function +
      "); the stub's workbook::require_* calls checked every argument, and threw "
      "std::invalid_argument.";
  try {
    call();
  } catch (const std::invalid_argument&) {
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << call_text << " threw an exception other than std::invalid_argument (\""
                  << e.what() << "\"), where " << wrong << "." << edit;
    return;
  }
  ADD_FAILURE() << call_text << " returned without throwing, though " << wrong
                << ": only that is wrong in this call, so your checks leave it out." << edit;
}

// --- ReLU ----------------------------------------------------------------------------------------

TEST(Relu, MatchesOracleAtEverySize) {
  auto rng = workbook::testing::rng();
  Cases cases(lab01::oracle::where("relu"), "size");
  for (std::size_t n : sizes_with_every_tail()) {
    cases.next_size(n);
    const workbook::Vector x = workbook::normal(n, rng);
    GuardedBuffer<float> y(n);
    lab01::relu(as_span(x), y.span());
    cases.check(lab01::oracle::check_relu(as_span(x), y));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Relu, UnalignedInputAndOutput) {
  auto rng = workbook::testing::rng();
  const std::size_t n = 1000;
  const workbook::Vector storage = workbook::normal(n + 16, rng);
  Cases cases(lab01::oracle::where("relu"), "shift");
  for (std::size_t shift = 1; shift < 16; ++shift) {
    cases.next("offsets from a 64-byte boundary, in floats: x " + std::to_string(shift) + ", y " +
               std::to_string(16 - shift));
    const auto x = as_span(storage).subspan(shift, n);
    GuardedBuffer<float> y(n, /*misalign=*/16 - shift);
    lab01::relu(x, y.span());
    cases.check(lab01::oracle::check_relu(x, y));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Relu, PropagatesNaN) {
  // As in PyTorch: relu(NaN) is NaN. Comparisons with NaN are false, so the formula decides.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(40, -1.0f);
  for (std::size_t i = 0; i < x.size(); i += 3) x[i] = i % 2 ? -nan : nan;
  x[1] = 2.0f;
  GuardedBuffer<float> y(x.size());
  lab01::relu(x, y.span());
  EXPECT_CORRECT(lab01::oracle::check_relu(x, y));
}

TEST(Relu, SpecialValues) {
  // +-0, denormals, tiny and huge values, +-inf and NaN.
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::adversarial(4099, rng);
  GuardedBuffer<float> y(x.size());
  lab01::relu(as_span(x), y.span());
  EXPECT_CORRECT(lab01::oracle::check_relu(as_span(x), y));
}

TEST(Relu, InPlace) {
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::normal(1027, rng);
  GuardedBuffer<float> y(x.size());
  std::copy(x.begin(), x.end(), y.data());
  lab01::relu(y.span(), y.span());
  EXPECT_CORRECT(lab01::oracle::check_relu(as_span(x), y));
}

TEST(Relu, LeavesInputUnchanged) {
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::adversarial(1000, rng);
  const workbook::Vector before = x;
  GuardedBuffer<float> y(x.size());
  lab01::relu(as_span(x), y.span());
  EXPECT_CORRECT(
      workbook::check_unchanged(as_span(before), as_span(x), lab01::oracle::where("relu"), "x"));
}

TEST(Relu, RejectsMismatchedOrOverlappingBuffers) {
  // Room past each span's end, so that a call that should have thrown writes nothing it does not
  // own.
  std::vector<float> x(32), y(32);
  const auto x10 = std::span<const float>(x).first(10);
  expect_rejected(
      "relu", [&] { lab01::relu(x10, std::span<float>(y).first(9)); },
      "relu(x, y) with x.size() = 10 and y.size() = 9", "y is shorter than x");
  expect_rejected(
      "relu",
      [&] { lab01::relu(std::span<const float>(x).first(9), std::span<float>(y).first(10)); },
      "relu(x, y) with x.size() = 9 and y.size() = 10", "x is shorter than y");
  expect_rejected(
      "relu", [&] { lab01::relu(x10, std::span<float>(x).subspan(1, 10)); },
      "relu(x, y) with y one float after x, 10 floats each",
      "x and y overlap without being the same buffer");
}

// --- add, multiply, squared_difference ---------------------------------------------------------

void run_binary(Binary op, std::span<const float> a, std::span<const float> b,
                std::span<float> out) {
  switch (op) {
    case Binary::add:
      return lab01::add(a, b, out);
    case Binary::multiply:
      return lab01::multiply(a, b, out);
    case Binary::squared_difference:
      return lab01::squared_difference(a, b, out);
  }
}

void expect_matches_at_every_size(Binary op) {
  auto rng = workbook::testing::rng();
  Cases cases(lab01::oracle::where(lab01::oracle::name(op)), "size");
  for (std::size_t n : sizes_with_every_tail()) {
    cases.next_size(n);
    const workbook::Vector a = workbook::normal(n, rng), b = workbook::normal(n, rng);
    GuardedBuffer<float> out(n);
    run_binary(op, as_span(a), as_span(b), out.span());
    cases.check(lab01::oracle::check_binary(op, as_span(a), as_span(b), out));
  }
  EXPECT_ALL_CORRECT(cases);
}

void expect_special_values(Binary op) {
  auto rng = workbook::testing::rng();
  const workbook::Vector a = workbook::adversarial(4099, rng), b = workbook::adversarial(4099, rng);
  GuardedBuffer<float> out(a.size());
  run_binary(op, as_span(a), as_span(b), out.span());
  EXPECT_CORRECT(lab01::oracle::check_binary(op, as_span(a), as_span(b), out));
}

void expect_unaligned_and_in_place(Binary op) {
  auto rng = workbook::testing::rng();
  const std::size_t n = 999;
  const workbook::Vector a = workbook::normal(n + 16, rng), b = workbook::normal(n + 16, rng);
  Cases cases(lab01::oracle::where(lab01::oracle::name(op)));
  for (std::size_t shift = 1; shift < 16; shift += 2) {
    cases.next("offsets from a 64-byte boundary, in floats: a " + std::to_string(shift) + ", b " +
               std::to_string(16 - shift) + ", out " + std::to_string(shift));
    const auto as = as_span(a).subspan(shift, n), bs = as_span(b).subspan(16 - shift, n);
    GuardedBuffer<float> out(n, shift);
    run_binary(op, as, bs, out.span());
    cases.check(lab01::oracle::check_binary(op, as, bs, out));
  }
  cases.next("in place: out is a");
  GuardedBuffer<float> inout(n);
  std::copy(a.begin(), a.begin() + n, inout.data());
  run_binary(op, inout.span(), as_span(b).first(n), inout.span());
  cases.check(lab01::oracle::check_binary(op, as_span(a).first(n), as_span(b).first(n), inout));
  EXPECT_ALL_CORRECT(cases);
}

TEST(Add, MatchesOracleAtEverySize) {
  expect_matches_at_every_size(Binary::add);
}
TEST(Add, SpecialValues) {
  expect_special_values(Binary::add);
}
TEST(Add, UnalignedAndInPlace) {
  expect_unaligned_and_in_place(Binary::add);
}
TEST(Multiply, MatchesOracleAtEverySize) {
  expect_matches_at_every_size(Binary::multiply);
}
TEST(Multiply, SpecialValues) {
  expect_special_values(Binary::multiply);
}
TEST(Multiply, UnalignedAndInPlace) {
  expect_unaligned_and_in_place(Binary::multiply);
}
TEST(SquaredDifference, MatchesOracleAtEverySize) {
  expect_matches_at_every_size(Binary::squared_difference);
}
TEST(SquaredDifference, SpecialValues) {
  expect_special_values(Binary::squared_difference);
}
TEST(SquaredDifference, UnalignedAndInPlace) {
  expect_unaligned_and_in_place(Binary::squared_difference);
}

TEST(BinaryOps, RejectMismatchedSizes) {
  // One operand at a time is one float shorter than the other two (room past each span's end, so
  // that a call that should have thrown writes nothing it does not own).
  std::vector<float> a(32), b(32), out(32);
  for (Binary op : {Binary::add, Binary::multiply, Binary::squared_difference}) {
    const char* name = lab01::oracle::name(op);
    for (const char* shorter : {"a", "b", "out"}) {
      const std::string s = shorter;
      const std::size_t na = s == "a" ? 7 : 8, nb = s == "b" ? 7 : 8, nout = s == "out" ? 7 : 8;
      expect_rejected(
          name,
          [&] {
            run_binary(op, std::span<const float>(a).first(na), std::span<const float>(b).first(nb),
                       std::span<float>(out).first(nout));
          },
          std::string(name) + "(a, b, out) with a.size() = " + std::to_string(na) +
              ", b.size() = " + std::to_string(nb) + ", out.size() = " + std::to_string(nout),
          s + " is shorter than the other two");
    }
    for (const char* input : {"a", "b"}) {
      const bool is_a = std::string(input) == "a";
      const std::span<const float> shifted = std::span<const float>(out).subspan(1, 8);
      expect_rejected(
          name,
          [&] {
            run_binary(op, is_a ? shifted : std::span<const float>(a).first(8),
                       is_a ? std::span<const float>(b).first(8) : shifted,
                       std::span<float>(out).first(8));
          },
          std::string(name) + "(a, b, out) with " + input + " one float after out, 8 floats each",
          std::string(input) + " and out overlap without being the same buffer");
    }
  }
}

// --- dot and euclidean_distance
// -------------------------------------------------------------------

// Calls `reduce` on the spans a and b three times, with the element right after each span's end
// (`a_after`, `b_after`: inside the test's buffers) NaN, then 0, then NaN again, and puts back what
// was there. Returns the first result, and what the three show: a result that changes with those
// elements read past the end; one that changes on the same inputs depends on something else (see
// lab01::oracle::Seen).
template <class Reduce>
std::pair<float, lab01::oracle::Seen> reduce_three_times(std::span<const float> a, float& a_after,
                                                         std::span<const float> b, float& b_after,
                                                         Reduce reduce) {
  const float kept_a = a_after, kept_b = b_after;
  const auto call = [&](float after) {
    a_after = b_after = after;
    return std::bit_cast<std::uint32_t>(reduce(a, b));
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::uint32_t first = call(nan), with_zero = call(0.0f), again = call(nan);
  a_after = kept_a;
  b_after = kept_b;
  return {std::bit_cast<float>(first),
          {.read_past_the_end = first == again && with_zero != first,
           .changes_between_calls = first != again}};
}

TEST(Dot, MatchesOracleAtEverySize) {
  auto rng = workbook::testing::rng();
  Cases cases(lab01::oracle::where("dot"), "size");
  for (std::size_t n = 0; n <= 200; ++n) {
    cases.next_size(n);
    workbook::Vector a = workbook::normal(n + 1, rng), b = workbook::normal(n + 1, rng);
    const auto as = as_span(a).first(n), bs = as_span(b).first(n);
    const auto [got, seen] = reduce_three_times(as, a(n), bs, b(n), lab01::dot);
    cases.check(lab01::oracle::check_dot_seen(as, bs, got, seen));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Dot, LargeAndUnaligned) {
  auto rng = workbook::testing::rng();
  const std::size_t n = (1 << 20) + 7;
  // One element more than the largest shift needs: the element after each span's end.
  workbook::Vector a = workbook::normal(n + 4, rng), b = workbook::normal(n + 4, rng);
  // The error bound grows with sum |a_i b_i|: with terms of both signs it is larger than the sum
  // itself at this n, so positive terms are tried too, where the bound is a few percent of the sum
  // and a lost share of it shows.
  workbook::Vector pa = workbook::uniform(n + 4, rng, 0.5, 1.5),
                   pb = workbook::uniform(n + 4, rng, 0.5, 1.5);
  Cases cases(lab01::oracle::where("dot"), "case");
  for (const bool positive : {false, true})
    for (std::size_t shift : {0, 1, 3}) {
      cases.next("n = " + std::to_string(n) + (positive ? ", every term positive" : "") +
                 ", offsets from a 64-byte boundary, in floats: a " + std::to_string(shift) +
                 ", b " + std::to_string(3 - shift));
      workbook::Vector &x = positive ? pa : a, &y = positive ? pb : b;
      const auto as = as_span(x).subspan(shift, n), bs = as_span(y).subspan(3 - shift, n);
      const auto [got, seen] =
          reduce_three_times(as, x(shift + n), bs, y(3 - shift + n), lab01::dot);
      cases.check(lab01::oracle::check_dot_seen(as, bs, got, seen));
    }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Dot, EmptyIsZero) {
  EXPECT_EQ(lab01::dot(std::span<const float>(), std::span<const float>()), 0.0f);
}

TEST(Dot, CancellationStaysWithinTheBound) {
  // Large terms that cancel: the error bound scales with sum |a_i b_i|, not with the small result.
  auto rng = workbook::testing::rng();
  workbook::Vector a = workbook::normal(1001, rng), b = workbook::normal(1001, rng);
  a(0) = 1e4f;
  b(0) = 1e4f;
  a(1000) = -1e4f;
  b(1000) = 1e4f;
  EXPECT_CORRECT(
      lab01::oracle::check_dot(as_span(a), as_span(b), lab01::dot(as_span(a), as_span(b))));
}

TEST(Dot, PropagatesNaNAndInfinity) {
  std::vector<float> a(37, 1.0f), b(37, 2.0f);
  a[36] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(lab01::dot(a, b)))
      << "a NaN in the last (tail) element must reach the result";
  a[36] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(lab01::dot(a, b), std::numeric_limits<float>::infinity());
}

TEST(Dot, RejectsMismatchedSizes) {
  std::vector<float> a(8), b(8);
  const auto five = [](const std::vector<float>& v) { return std::span<const float>(v).first(5); };
  expect_rejected(
      "dot", [&] { lab01::dot(five(a), b); }, "dot(a, b) with a.size() = 5 and b.size() = 8",
      "a is shorter than b");
  expect_rejected(
      "dot", [&] { lab01::dot(a, five(b)); }, "dot(a, b) with a.size() = 8 and b.size() = 5",
      "b is shorter than a");
}

TEST(EuclideanDistance, MatchesOracleAtEverySize) {
  auto rng = workbook::testing::rng();
  Cases cases(lab01::oracle::where("euclidean_distance"), "size");
  for (std::size_t n = 0; n <= 200; ++n) {
    cases.next_size(n);
    workbook::Vector a = workbook::normal(n + 1, rng), b = workbook::normal(n + 1, rng);
    const auto as = as_span(a).first(n), bs = as_span(b).first(n);
    const auto [got, seen] = reduce_three_times(as, a(n), bs, b(n), lab01::euclidean_distance);
    cases.check(lab01::oracle::check_euclidean_seen(as, bs, got, seen));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(EuclideanDistance, LargeAndUnaligned) {
  auto rng = workbook::testing::rng();
  const std::size_t n = (1 << 20) + 5;
  workbook::Vector a = workbook::uniform(n + 2, rng), b = workbook::uniform(n + 2, rng);
  const auto as = as_span(a).subspan(1, n), bs = as_span(b).first(n);
  const auto [got, seen] = reduce_three_times(as, a(n + 1), bs, b(n), lab01::euclidean_distance);
  EXPECT_CORRECT(lab01::oracle::check_euclidean_seen(as, bs, got, seen));
}

TEST(EuclideanDistance, OfAVectorToItselfIsZero) {
  auto rng = workbook::testing::rng();
  const workbook::Vector a = workbook::normal(333, rng);
  EXPECT_EQ(lab01::euclidean_distance(as_span(a), as_span(a)), 0.0f);
}

TEST(EuclideanDistance, OfNearbyVectors) {
  // b differs from a by about 1/1000 of a: the distance is small against |a| and |b|, which is
  // where a formula that cancels loses its digits.
  // Each size is tried on vectors far apart first: a kernel wrong there is wrong in a way that has
  // nothing to do with cancellation, and its failures there tell which.
  auto rng = workbook::testing::rng();
  Cases cases(lab01::oracle::where("euclidean_distance"), "case");
  for (std::size_t n : {1, 7, 16, 100, 333, 4096}) {
    const workbook::Vector a = workbook::normal(n, rng), step = workbook::normal(n, rng);
    workbook::Vector b = a;
    for (std::size_t i = 0; i < n; ++i) b(i) = a(i) + 1e-3f * step(i);
    for (const bool nearby : {false, true}) {
      const workbook::Vector& other = nearby ? b : step;
      cases.next("n = " + std::to_string(n) + (nearby ? ", b = a + 0.001 * step" : ", b apart"));
      cases.check(lab01::oracle::check_euclidean(
          as_span(a), as_span(other), lab01::euclidean_distance(as_span(a), as_span(other))));
    }
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(EuclideanDistance, RejectsMismatchedSizes) {
  std::vector<float> a(8), b(8);
  const auto five = [](const std::vector<float>& v) { return std::span<const float>(v).first(5); };
  expect_rejected(
      "euclidean_distance", [&] { lab01::euclidean_distance(five(a), b); },
      "euclidean_distance(a, b) with a.size() = 5 and b.size() = 8", "a is shorter than b");
  expect_rejected(
      "euclidean_distance", [&] { lab01::euclidean_distance(a, five(b)); },
      "euclidean_distance(a, b) with a.size() = 8 and b.size() = 5", "b is shorter than a");
}

}  // namespace
