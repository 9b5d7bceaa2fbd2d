// Seeds, the generator, input generators, guarded buffers, argument checks, NotImplemented.
#include <workbook/internal/subprocess.hpp>
#include <workbook/not_implemented.hpp>
#include <workbook/require.hpp>
#include <workbook/seed.hpp>
#include <workbook/simd.hpp>
#include <workbook/tensor.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace {

using ::testing::HasSubstr;

TEST(Seed, SameSeedSameSequenceOnEveryPlatform) {
  workbook::Rng a(42), b(42), c(43);
  // xoshiro256** seeded through splitmix64 is fully specified: these values are the same with any
  // compiler and standard library, so a printed seed replays anywhere. (The value was computed
  // independently, with a few lines of Python implementing the published algorithms.)
  EXPECT_EQ(a.next(), 0x15780B2E0C2EC716ull);
  EXPECT_EQ(b.next(), 0x15780B2E0C2EC716ull);
  EXPECT_NE(c.next(), 0x15780B2E0C2EC716ull);
}

TEST(Seed, ParsesDecimalSeedsOnly) {
  EXPECT_EQ(workbook::parse_seed("963474811"), 963474811u);
  EXPECT_THROW(workbook::parse_seed("12ab"), std::invalid_argument);
  EXPECT_THROW(workbook::parse_seed(""), std::invalid_argument);
  EXPECT_THROW(workbook::parse_seed("-1"), std::invalid_argument);
}

TEST(Seed, DerivedSeedsDependOnTheName) {
  EXPECT_EQ(workbook::seed_for("a"), workbook::seed_for("a"));
  EXPECT_NE(workbook::seed_for("a"), workbook::seed_for("b"));
}

TEST(Rng, UniformIntegerAndNormalDistributions) {
  workbook::Rng rng(7);
  std::set<std::int64_t> seen;
  double sum = 0, sum_sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform(-2, 3);
    ASSERT_GE(u, -2);
    ASSERT_LT(u, 3);
    const std::int64_t k = rng.integer(-3, 3);
    ASSERT_GE(k, -3);
    ASSERT_LE(k, 3);
    seen.insert(k);
    const double z = rng.normal();
    sum += z;
    sum_sq += z * z;
  }
  EXPECT_EQ(seen.size(), 7u) << "every integer of the inclusive range appears";
  // Mean and variance of n standard normals: within 5 standard errors.
  EXPECT_NEAR(sum / n, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(sum_sq / n, 1.0, 5 * std::sqrt(2.0 / n));
  EXPECT_THROW(rng.integer(3, 2), std::invalid_argument);
}

TEST(Generators, AdversarialInputsHoldEverySpecialValue) {
  workbook::Rng rng(1);
  const workbook::Vector x = workbook::adversarial(10000, rng);
  int nan = 0, inf = 0, denormal = 0, zero = 0, huge = 0, negative_zero = 0;
  for (float v : x) {
    nan += std::isnan(v);
    inf += std::isinf(v);
    denormal += std::fpclassify(v) == FP_SUBNORMAL;
    zero += v == 0;
    negative_zero += v == 0 && std::signbit(v);
    huge += std::isfinite(v) && std::fabs(v) >= 1e37f;
  }
  EXPECT_GT(nan, 0);
  EXPECT_GT(inf, 0);
  EXPECT_GT(denormal, 0);
  EXPECT_GT(zero, 0);
  EXPECT_GT(negative_zero, 0);
  EXPECT_GT(huge, 0);
  const workbook::Vector finite = workbook::adversarial(10000, rng, workbook::Specials::finite);
  for (float v : finite) ASSERT_TRUE(std::isfinite(v));
}

TEST(Generators, RangesAndShapes) {
  workbook::Rng rng(2);
  const auto q = workbook::int8_uniform(1000, rng);
  for (auto v : q) ASSERT_GE(v, -127);
  EXPECT_THROW(workbook::int8_uniform(1, rng, -200, 0), std::invalid_argument);
  const workbook::Matrix m = workbook::normal_matrix(3, 5, rng);
  EXPECT_EQ(m.shape()[0], 3u);
  EXPECT_EQ(m.shape()[1], 5u);
  const workbook::Vector u = workbook::uniform(1000, rng, 2, 3);
  for (float v : u) {
    ASSERT_GE(v, 2.0f);
    ASSERT_LE(v, 3.0f);
  }
}

TEST(GuardedBuffer, PoisonMisalignmentAndDamage) {
  workbook::GuardedBuffer<float> y(10, 3);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(y.data()) % 64, 12u)
      << "3 floats past a 64-byte boundary";
  for (std::size_t i = 0; i < 10; ++i) EXPECT_TRUE(y.is_poison(i));
  y[4] = 1;
  EXPECT_FALSE(y.is_poison(4));
  EXPECT_TRUE(y.damage().intact());
  y.data()[11] = 0;
  y.data()[-2] = 0;
  const workbook::GuardDamage d = y.damage();
  EXPECT_EQ(d.after, 1u);
  EXPECT_EQ(d.first_after, 1u);
  EXPECT_EQ(d.before, 1u);
  y.poison();
  EXPECT_TRUE(y.is_poison(4));
}

TEST(Require, NamesTheArgumentsInItsMessages) {
  try {
    workbook::require_same_size("relu", 10, "x", 9, "y");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "relu: x has 10 elements but y has 9: they must be the same size");
  }
  float buffer[8] = {};
  EXPECT_NO_THROW(workbook::require_no_partial_overlap("f", buffer, 32, "a", buffer, 32, "b"));
  EXPECT_NO_THROW(workbook::require_no_partial_overlap("f", buffer, 16, "a", buffer + 4, 16, "b"));
  EXPECT_THROW(workbook::require_no_partial_overlap("f", buffer, 16, "a", buffer + 2, 16, "b"),
               std::invalid_argument);
}

TEST(Require, DisjointRejectsAnySharedByteEvenTheSameBuffer) {
  float buffer[8] = {};
  EXPECT_NO_THROW(workbook::require_disjoint("f", buffer, 16, "a", buffer + 4, 16, "b"));
  EXPECT_NO_THROW(workbook::require_disjoint("f", buffer, 0, "a", buffer, 32, "b"));
  EXPECT_THROW(workbook::require_disjoint("f", buffer, 32, "a", buffer, 32, "b"),
               std::invalid_argument);
  try {
    workbook::require_disjoint("matmul", buffer, 20, "C", buffer + 4, 16, "A");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("matmul: C and A share memory"));
  }
}

TEST(Require, MatrixNeedsItsLastRowButNoPaddingAfterIt) {
  // 3 x 4 with ld 6: rows start at 0, 6 and 12, the last ends at 16.
  EXPECT_NO_THROW(workbook::require_matrix("f", "A", 16, 3, 4, 6, "lda"));
  EXPECT_NO_THROW(workbook::require_matrix("f", "A", 0, 0, 4, 4, "lda"));
  EXPECT_NO_THROW(workbook::require_matrix("f", "A", 0, 5, 0, 0, "lda"));
  try {
    workbook::require_matrix("matmul", "A", 15, 3, 4, 6, "lda");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(
        e.what(),
        "matmul: A (3 x 4) with lda 6 needs (3 - 1) * 6 + 4 = 16 elements, but its span has 15");
  }
  try {
    workbook::require_matrix("matmul", "B", 100, 3, 4, 3, "ldb");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("matmul: ldb is 3 but B (3 x 4) has 4 columns"));
  }
  const std::size_t huge = std::size_t{1} << 62;
  EXPECT_THROW(workbook::require_matrix("f", "A", huge, huge, 8, 8, "lda"), std::invalid_argument);
}

TEST(NotImplemented, NamesTheFunctionAndTheFileFromTheRepositoryRoot) {
  EXPECT_EQ(
      workbook::repository_path("/home/s/perf-workbook/labs/01_vectorized_relu/vector_ops.cpp"),
      "labs/01_vectorized_relu/vector_ops.cpp");
  EXPECT_EQ(workbook::repository_path("/x/labs/old/solutions/02/m.cpp"), "solutions/02/m.cpp");
  EXPECT_EQ(workbook::repository_path("elsewhere.cpp"), "elsewhere.cpp");
  const workbook::NotImplemented e("relu");
  EXPECT_EQ(e.function(), "relu");
  EXPECT_THAT(
      e.what(),
      HasSubstr("not implemented yet: implement relu in common/tests/seed_tensor_test.cpp"));
}

TEST(Subprocess, ReportsExitCodesSignalsAndMissingPrograms) {
  workbook::Subprocess exits({.argv = {"/bin/sh", "-c", "exit 3"}});
  const auto e = exits.wait(10);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->exited);
  EXPECT_EQ(e->code, 3);
  workbook::Subprocess crashes({.argv = {"/bin/sh", "-c", "kill -SEGV $$"}});
  const auto c = crashes.wait(10);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->signal, 11);
  EXPECT_THAT(c->describe(), HasSubstr("killed by signal 11"));
  EXPECT_THROW(workbook::Subprocess({.argv = {"/no/such/program"}}), std::runtime_error);
}

TEST(Subprocess, TalksOverItsPrivateChannelAndTimesOut) {
  workbook::Subprocess child(
      {.argv = {"/bin/sh", "-c", "echo noise; read line <&3; echo \"got $line\" >&4; exec sleep 5"},
       .channel = true});
  ASSERT_TRUE(child.send("hello"));
  std::string line;
  ASSERT_EQ(child.read_line(line, 10), workbook::Subprocess::Read::line);
  EXPECT_EQ(line, "got hello");  // "noise" went to stdout, not to the channel
  EXPECT_EQ(child.read_line(line, 0.05), workbook::Subprocess::Read::timeout);
  child.kill();
  EXPECT_EQ(child.wait(10)->signal, 9);
}

TEST(Simd, StreamingStoresOfFloatsAndBytes) {
  // Each writes one whole register to an aligned address, and nothing else.
  using Floats = xsimd::batch<float>;
  using Bytes = xsimd::batch<std::int8_t>;
  workbook::AlignedVector<float> f(2 * Floats::size, -1.0f);
  workbook::AlignedVector<std::int8_t> b(2 * Bytes::size, -1);
  EXPECT_TRUE(workbook::simd_aligned(f.data()) && workbook::simd_aligned(b.data()));
  EXPECT_FALSE(workbook::simd_aligned(b.data() + 1));
  workbook::store_streaming(f.data(), Floats(2.5f));
  workbook::store_streaming(b.data(), Bytes(std::int8_t{7}));
  workbook::stream_fence();
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], i < Floats::size ? 2.5f : -1.0f) << i;
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i], i < Bytes::size ? 7 : -1) << i;
}

}  // namespace
