// Lab 01's perf hints (labs/01_vectorized_relu/tests/vector_ops_hints.hpp) on controlled
// evidence: each kind of kernel gets the advice its timings support, and none is asked to do what
// it already does.
#include "vector_ops_hints.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

bool says(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(Lab01Hints, ScalarLoopIsToldToVectorise) {
  const std::string hint = lab01::hints::streaming("add", 4096, 2.94, 2.96, 0, 0);
  EXPECT_TRUE(says(hint, "one element at a time")) << hint;
  EXPECT_FALSE(says(hint, "Streaming stores")) << hint;
}

// The case: a vectorised relu with ordinary stores is told about its stores, and never
// asked whether its loop is vectorised.
TEST(Lab01Hints, VectorisedLoopWithOrdinaryStoresIsToldToStream) {
  const std::string hint = lab01::hints::streaming("relu", 4096, 30, 2.1, 4.32, 4.30);
  EXPECT_TRUE(says(hint, "Streaming stores")) << hint;
  EXPECT_FALSE(says(hint, "one element at a time")) << hint;
  EXPECT_FALSE(says(hint, "vectorised?")) << hint;
}

TEST(Lab01Hints, StreamingKernelIsToldNeither) {
  const std::string hint = lab01::hints::streaming("relu", 4096, 23, 2.3, 6.2, 4.1);
  EXPECT_TRUE(says(hint, "writes around the cache already")) << hint;
  EXPECT_FALSE(says(hint, "Streaming stores (")) << hint;
  EXPECT_FALSE(says(hint, "one element at a time")) << hint;
}

// Streaming stores chosen for the wrong sizes: vectorised (1.9x a scalar loop in L1, where it
// streams), and from memory a little faster than ordinary stores, not as much as streaming gains.
TEST(Lab01Hints, AKernelThatStreamsOnlySomeStoresIsToldToCheckWhichDo) {
  const std::string hint = lab01::hints::streaming("relu", 4096, 5.7, 3.0, 8.76, 6.89);
  EXPECT_TRUE(says(hint, "Check which outputs take your streaming path")) << hint;
  EXPECT_FALSE(says(hint, "writes around the cache already")) << hint;
  EXPECT_FALSE(says(hint, "one element at a time")) << hint;
}

// Streaming stores chosen the wrong way round: slow in L1 (1.68x a scalar loop, where ordinary
// stores give 4x or more) and, from memory, no faster than ordinary stores.
TEST(Lab01Hints, StreamingChosenTheWrongWayRoundIsNamed) {
  const std::string hint = lab01::hints::streaming("relu", 4096, 5.96, 3.53, 14, 19);
  EXPECT_TRUE(says(hint, "is the wrong way round")) << hint;
  EXPECT_FALSE(says(hint, "one element at a time")) << hint;
}

// A fence after every streaming store: fast in L1, 23 times slower than ordinary stores from
// memory. Not "no faster": something waits at every store.
TEST(Lab01Hints, AKernelFarSlowerThanOrdinaryStoresIsToldSomethingWaitsAtEachStore) {
  const std::string hint = lab01::hints::streaming("relu", 4096, 19, 3.55, 1.00, 23);
  EXPECT_TRUE(says(hint, "23x slower than ordinary stores")) << hint;
  EXPECT_TRUE(says(hint, "a fence after every streaming store")) << hint;
  EXPECT_FALSE(says(hint, "no faster")) << hint;
}

TEST(Lab01Hints, Reductions) {
  const std::string scalar = lab01::hints::reduction("dot", 4096, 0.9, 0.9, 11);
  EXPECT_TRUE(says(scalar, "Use xsimd::fma")) << scalar;
  const std::string one = lab01::hints::reduction("dot", 4096, 12, 0.96, 12);
  EXPECT_TRUE(says(one, "Keep 4 independent accumulators")) << one;
  EXPECT_FALSE(says(one, "Use xsimd::fma")) << one;
  const std::string several = lab01::hints::reduction("dot", 4096, 32, 0.9, 11);
  EXPECT_TRUE(says(several, "several FMAs in flight already")) << several;
  EXPECT_FALSE(says(several, "Keep 4")) << several;
  // Vectorised (5x the scalar loop) but 2.5x slower than one accumulator: a call per batch.
  const std::string called = lab01::hints::reduction("dot", 4096, 4.8, 0.9, 12);
  EXPECT_TRUE(says(called, "2.50 times slower than one accumulator")) << called;
  EXPECT_TRUE(says(called, "std::function")) << called;
  EXPECT_FALSE(says(called, "Keep 4")) << called;
}

}  // namespace
