// Lab 02's perf hint (labs/02_matmul/tests/matmul_hints.hpp) on controlled evidence: each kind of
// kernel gets the advice its timings support, and none is told to do what it already does.
#include "matmul_hints.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using lab02::hints::advice;

bool says(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(MatmulHints, SlowerThanIkjInCacheIsToldAboutItsInnermostLoop) {
  const std::string hint = advice(2.15, 37, 0, "509 x 521 x 503", "");
  EXPECT_TRUE(says(hint, "its innermost loop is")) << hint;
  EXPECT_FALSE(says(hint, "thrash")) << hint;
}

TEST(MatmulHints, AsFastAsIkjIsToldAboutRegisterBlocking) {
  const std::string hint = advice(35, 37, 0, "1024 x 1024 x 1024", "");
  EXPECT_TRUE(says(hint, "Register blocking")) << hint;
  EXPECT_FALSE(says(hint, "innermost loop")) << hint;
}

// The case: an i-k-j kernel with register tiles whose blocks thrash at the case's size is
// told so, and never to reorder its loops to i-k-j.
TEST(MatmulHints, BlockedKernelThatThrashesIsNotToldToReorderItsLoops) {
  const std::string hint = advice(146, 36, 23, "1024 x 1024 x 1024", "");
  EXPECT_TRUE(says(hint, "its blocks thrash")) << hint;
  // A block of B packed for every panel of rows slows down alike: both causes are named.
  EXPECT_TRUE(says(hint, "packed again for every panel of rows")) << hint;
  EXPECT_TRUE(says(hint, "16% of that")) << hint;
  EXPECT_FALSE(says(hint, "i-k-j order")) << hint;
  EXPECT_FALSE(says(hint, "Register blocking")) << hint;
}

TEST(MatmulHints, FastAtEverySizeIsToldAboutItsMicroKernel) {
  const std::string hint = advice(146, 36, 140, "509 x 521 x 503", " Leftovers.");
  EXPECT_TRUE(says(hint, "the blocking works")) << hint;
  EXPECT_TRUE(says(hint, "micro-kernel")) << hint;
  EXPECT_TRUE(says(hint, " Leftovers.")) << hint;
  EXPECT_FALSE(says(hint, "thrash")) << hint;
}

}  // namespace
