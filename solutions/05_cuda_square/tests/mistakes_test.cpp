// Lab 05's diagnoses, proved on the CPU: each mistake of the catalogue (labs/05_cuda_square/tests/
// square_mistakes.hpp), and each generic pattern a square kernel can show, is emulated here in
// float32 exactly as the buggy kernel computes it (the grid of blocks and threads run as loops),
// and the lab's own check must name it. No GPU is needed, so CI runs it; the buggy kernels
// themselves (solutions/05_cuda_square/mistakes/) run on a GPU machine. No message may speak of
// SIMD.
#include "square_mistakes.hpp"
#include "square_oracle.hpp"

#include <workbook/buffer.hpp>
#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <vector>

namespace {

using workbook::CheckResult;
using workbook::GuardedBuffer;
using Body = std::function<void(std::size_t block, std::size_t thread)>;

std::vector<float> inputs(std::size_t n) {
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::normal(n, rng);
  return {x.begin(), x.end()};
}

// A launch of `blocks` blocks of `threads` threads, run one thread after the other.
void launch(std::size_t blocks, std::size_t threads, const Body& body) {
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t t = 0; t < threads; ++t) body(b, t);
}

std::size_t ceil_div(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

// What a student of a CUDA lab must never read: SIMD's vocabulary (the FORBID of the buggy files in
// solutions/05_cuda_square/CMakeLists.txt).
void expect_cuda_words(const std::string& text) {
  static const std::regex forbidden("SIMD|[Bb]atch|[^a-z]lanes?[^a-z]|tail loop");
  std::smatch match;
  EXPECT_FALSE(std::regex_search(text, match, forbidden))
      << "speaks of '" << match.str() << "', which does not belong to a CUDA lab:\n"
      << text;
}

// The check of square on y, which must fail naming `what` (a catalogue entry), with `also` in its
// diagnosis.
void expect_named(const std::vector<float>& x, const GuardedBuffer<float>& y,
                  const std::string& what) {
  const CheckResult r = lab05::oracle::check_square(x, y);
  ASSERT_FALSE(r.ok) << "the emulated mistake passed the check";
  EXPECT_EQ(r.mistake, what) << r.report();
  EXPECT_EQ(r.diagnosis.rfind("your output matches " + what + ": ", 0), 0u) << r.report();
  expect_cuda_words(r.report());
}

// The check of square on y, which must fail with a generic diagnosis containing `text`.
CheckResult expect_generic(const std::vector<float>& x, const GuardedBuffer<float>& y,
                           const std::string& text, std::function<void()> run_again = {}) {
  const CheckResult r = lab05::oracle::check_square(x, y, std::move(run_again));
  EXPECT_FALSE(r.ok) << "the emulated mistake passed the check";
  EXPECT_EQ(r.mistake, "") << r.report();
  EXPECT_NE(r.diagnosis.find(text), std::string::npos) << r.report();
  expect_cuda_words(r.report());
  return r;
}

// y = x * x, one thread per element, `threads` per block: the right kernel, and the base of most
// mistakes below (index and grid given).
void one_per_thread(const std::vector<float>& x, GuardedBuffer<float>& y, std::size_t blocks,
                    std::size_t threads,
                    const std::function<std::size_t(std::size_t, std::size_t)>& index) {
  launch(blocks, threads, [&](std::size_t b, std::size_t t) {
    const std::size_t i = index(b, t);
    if (i < x.size()) y[i] = x[i] * x[i];
  });
}

std::size_t flat_index(std::size_t b, std::size_t t) {
  return b * 256 + t;
}

TEST(SquareCatalogue, TheRightKernelPasses) {
  for (std::size_t n : {0, 1, 3, 4, 5, 67, 257, 1000, 4099}) {
    const std::vector<float> x = inputs(n);
    GuardedBuffer<float> y(n);
    one_per_thread(x, y, ceil_div(n, 256), 256, flat_index);
    const CheckResult r = lab05::oracle::check_square(x, y);
    EXPECT_TRUE(r.ok) << r.report();
  }
}

TEST(SquareCatalogue, IndexWithoutTheBlock) {
  // (At n = 257 to 259 the output is also that of a float4 loop without its tail: that entry.)
  for (std::size_t n : {300, 1000, 4099}) {
    const std::vector<float> x = inputs(n);
    GuardedBuffer<float> y(n);
    one_per_thread(x, y, ceil_div(n, 256), 256, [](std::size_t, std::size_t t) { return t; });
    expect_named(x, y, "an index without the block, i = threadIdx.x");
  }
}

TEST(SquareCatalogue, BlockAndThreadSwapped) {
  for (std::size_t threads : {128, 256})
    for (std::size_t n : {2, 67, 1000, 70000}) {
      const std::vector<float> x = inputs(n);
      GuardedBuffer<float> y(n);
      one_per_thread(x, y, ceil_div(n, threads), threads,
                     [threads](std::size_t b, std::size_t t) { return t * threads + b; });
      expect_named(x, y,
                   "blockIdx.x and threadIdx.x swapped in the index, i = threadIdx.x * blockDim.x "
                   "+ blockIdx.x");
    }
}

TEST(SquareCatalogue, Float4LoopWithoutItsTail) {
  for (std::size_t n : {5, 67, 4099}) {
    std::vector<float> x = inputs(n);
    // As in Square.HugeAndSpecialValues: a NaN among the three left over. (Its NaN square once let
    // the swapped-index entry, whose grid of 64-thread blocks misses only the last two, match.)
    if (n == 4099) x[4096] = std::numeric_limits<float>::quiet_NaN();
    GuardedBuffer<float> y(n);
    const std::size_t n4 = n / 4;
    launch(ceil_div(n4, 256), 256, [&](std::size_t b, std::size_t t) {
      const std::size_t i = b * 256 + t;
      if (i < n4)
        for (std::size_t k = 0; k < 4; ++k) y[4 * i + k] = x[4 * i + k] * x[4 * i + k];
    });
    expect_named(
        x, y,
        "a float4 loop without its scalar tail (or a grid of n / threads blocks, rounded down)");
  }
}

TEST(SquareCatalogue, GridRoundedDown) {
  for (std::size_t threads : {256, 1024})
    for (std::size_t n : {1000, 4196, 70000}) {
      // n < threads: one block covers it; n % threads < 4: the float4 entry's output (above).
      if (n < threads || n % threads < 4) continue;
      const std::vector<float> x = inputs(n);
      GuardedBuffer<float> y(n);
      one_per_thread(x, y, std::max<std::size_t>(n / threads, 1), threads,
                     [threads](std::size_t b, std::size_t t) { return b * threads + t; });
      expect_named(x, y, "a grid of n / threads blocks, rounded down");
    }
}

TEST(SquareCatalogue, TimesTwo) {
  for (std::size_t n : {1, 1000}) {
    const std::vector<float> x = inputs(n);
    GuardedBuffer<float> y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * 2;
    expect_named(x, y, "x * 2 (or x + x) instead of x * x");
  }
}

TEST(SquareCatalogue, Float4PartSquaredTwiceInPlace) {
  for (std::size_t n : {5, 1027, 4096}) {
    const std::vector<float> x = inputs(n);
    GuardedBuffer<float> y(n);
    std::copy(x.begin(), x.end(), y.data());                         // in place: y holds x
    for (std::size_t i = 0; i < n / 4 * 4; ++i) y[i] = y[i] * y[i];  // the float4 kernel
    for (std::size_t i = 0; i < n; ++i) y[i] = y[i] * y[i];          // then over everything
    expect_named(x, y,
                 "the float4 part squared twice (in place, a scalar pass over all of [0, n) after "
                 "the float4 kernel)");
  }
}

// --- Generic patterns, in CUDA's terms
// ------------------------------------------------------------

TEST(SquareGeneric, FixedGridTooSmall) {
  const std::size_t n = (1 << 20) + 13;
  const std::vector<float> x = inputs(n);
  GuardedBuffer<float> y(n);
  one_per_thread(x, y, 1024, 256, flat_index);  // no grid-stride loop
  expect_generic(x, y, "the threads you launched cover only the first 262144 of n = 1048589");
}

TEST(SquareGeneric, NoBoundsCheckWritesPastTheEnd) {
  const std::size_t n = 100;
  const std::vector<float> x = inputs(n);
  GuardedBuffer<float> y(n);
  // The block's threads past n store too; the first 64 of them land in the guard zone.
  for (std::size_t i = 0; i < n + GuardedBuffer<float>::kGuard; ++i)
    y.data()[i] = i < n ? x[i] * x[i] : 1.0f;
  const CheckResult r = expect_generic(x, y, "wrote past the end of the output: 64 elements");
  EXPECT_EQ(r.summary, "square: wrote outside the output");
}

TEST(SquareGeneric, ARaceChangesTheOutput) {
  // In place with a grid-stride loop that steps by blockDim.x: the blocks square each other's
  // results, or not, depending on the order their loads and stores meet. Run 1: one block after
  // the other; run 2: every block loads before any stores (each element squared once).
  const std::size_t n = 1027;
  const std::vector<float> x = inputs(n);
  GuardedBuffer<float> y(n);
  auto run = [&](bool loads_first) {
    std::copy(x.begin(), x.end(), y.data());
    const std::vector<float> loaded = x;
    for (std::size_t b = 0; b < 5; ++b)
      for (std::size_t t = 0; t < 256; ++t)
        for (std::size_t i = b * 256 + t; i < n; i += 256)
          y[i] = loads_first ? loaded[i] * loaded[i] : y[i] * y[i];
  };
  run(false);
  const CheckResult r =
      expect_generic(x, y, "the output differs between two runs with the same inputs", [&] {
        y.poison();
        run(true);
      });
  EXPECT_TRUE(r.unstable);
  EXPECT_NE(r.diagnosis.find("compute-sanitizer --tool racecheck"), std::string::npos);
}

TEST(SquareGeneric, WrongValuesWithoutAPatternSuggestARace) {
  // The same race seen once: some elements squared once, some more often.
  const std::size_t n = 1027;
  const std::vector<float> x = inputs(n);
  GuardedBuffer<float> y(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float once = x[i] * x[i];
    y[i] = i % 3 == 1 && i >= 256 ? once * once : once;
  }
  expect_generic(x, y, "compute-sanitizer --tool racecheck");
}

TEST(SquareGeneric, WritingIntoXIsNamed) {
  // The kernel's (destination, source) handed (x, y): x gets y's poison squared, y nothing.
  const std::size_t n = 67;
  const std::vector<float> x = inputs(n);
  std::vector<float> x_after = x;
  GuardedBuffer<float> y(n);
  for (std::size_t i = 0; i < n; ++i) x_after[i] = y[i] * y[i];
  expect_generic(x, y, "the output was never written");
  const CheckResult input = lab05::oracle::check_x_unchanged("square", x, x_after);
  EXPECT_FALSE(input.ok);
  EXPECT_EQ(input.summary, "square: changed its input x") << input.report();
  EXPECT_NE(input.diagnosis.find("An input is read-only"), std::string::npos) << input.report();
  expect_cuda_words(input.report());
}

// --- square_2d
// ------------------------------------------------------------------------------------

// A rows x cols matrix in rows ld_x apart, and the output's buffer with rows ld_y apart.
struct Matrix2d {
  std::size_t rows, cols, ld_x, ld_y;
  std::vector<float> x = inputs((rows - 1) * ld_x + cols);
  GuardedBuffer<float> y{(rows - 1) * ld_y + cols};

  // y[r * ld_y + c] = x[at(r, c)]^2 for the elements the launch reaches.
  void store(std::size_t r, std::size_t c, std::size_t from) {
    y[r * ld_y + c] = x[from] * x[from];
  }
  CheckResult check() const { return lab05::oracle::check_square_2d(x, ld_x, y, ld_y, rows, cols); }
};

// A 2-D launch of 16 x 16 blocks over a grid of gx x gy blocks.
void launch_2d(std::size_t gx, std::size_t gy,
               const std::function<void(std::size_t, std::size_t)>& body) {
  for (std::size_t by = 0; by < gy; ++by)
    for (std::size_t bx = 0; bx < gx; ++bx)
      for (std::size_t ty = 0; ty < 16; ++ty)
        for (std::size_t tx = 0; tx < 16; ++tx) body(bx * 16 + tx, by * 16 + ty);
}

void expect_named_2d(const Matrix2d& m, const std::string& what) {
  const CheckResult r = m.check();
  ASSERT_FALSE(r.ok) << "the emulated mistake passed the check";
  EXPECT_EQ(r.mistake, what) << r.report();
  expect_cuda_words(r.report());
}

CheckResult expect_generic_2d(const Matrix2d& m, const std::string& text) {
  const CheckResult r = m.check();
  EXPECT_FALSE(r.ok) << "the emulated mistake passed the check";
  EXPECT_EQ(r.mistake, "") << r.report();
  EXPECT_NE(r.diagnosis.find(text), std::string::npos) << r.report();
  expect_cuda_words(r.report());
  return r;
}

TEST(Square2dCatalogue, TheRightKernelPasses) {
  Matrix2d m{37, 21, 24, 22};
  launch_2d(ceil_div(m.cols, 16), ceil_div(m.rows, 16), [&](std::size_t c, std::size_t r) {
    if (r < m.rows && c < m.cols) m.store(r, c, r * m.ld_x + c);
  });
  const CheckResult r = m.check();
  EXPECT_TRUE(r.ok) << r.report();
}

TEST(Square2dCatalogue, OneLeadingDimensionForBoth) {
  Matrix2d m{7, 1, 4, 2};
  launch_2d(ceil_div(m.cols, 16), ceil_div(m.rows, 16), [&](std::size_t c, std::size_t r) {
    if (r < m.rows && c < m.cols) m.store(r, c, r * m.ld_y + c);
  });
  expect_named_2d(m, "x's rows read ld_y apart (one leading dimension used for both matrices)");
}

TEST(Square2dCatalogue, RowOffsetMissing) {
  Matrix2d m{7, 5, 8, 6};
  launch_2d(ceil_div(m.cols, 16), ceil_div(m.rows, 16), [&](std::size_t c, std::size_t r) {
    if (r < m.rows && c < m.cols) m.store(r, c, c);
  });
  expect_named_2d(m, "every row squaring row 0 of x (x's index lacks the row offset r * ld_x)");
}

TEST(Square2dCatalogue, GridAndIndexDisagreeOnRowsAndColumns) {
  // The row from .x, on a grid whose x runs over the columns: also "x and y swapped" in the index.
  Matrix2d m{1823, 781, 784, 800};
  launch_2d(ceil_div(m.cols, 16), ceil_div(m.rows, 16), [&](std::size_t r, std::size_t c) {
    if (r < m.rows && c < m.cols) m.store(r, c, r * m.ld_x + c);
  });
  expect_named_2d(m,
                  "rows and columns swapped between the grid and the index (the row taken from "
                  "blockIdx.x and threadIdx.x, on a grid whose x runs over the columns)");
}

TEST(Square2dCatalogue, ContiguousMatricesGetSquaresMistakes) {
  Matrix2d m{5, 31, 31, 31};  // 155 floats in a row: square's float4 loop leaves 3
  for (std::size_t i = 0; i < 152; ++i) m.y[i] = m.x[i] * m.x[i];
  expect_named_2d(
      m, "a float4 loop without its scalar tail (or a grid of n / threads blocks, rounded down)");
}

TEST(Square2dGeneric, GridRoundedDownInBothDirections) {
  Matrix2d m{33, 40, 40, 41};
  launch_2d(m.cols / 16, m.rows / 16, [&](std::size_t c, std::size_t r) {
    if (r < m.rows && c < m.cols) m.store(r, c, r * m.ld_x + c);
  });
  expect_generic_2d(m,
                    "the last 1 row and the last 8 columns were never written: your grid stops "
                    "short of M = 33 rows or N = 40 columns");
}

TEST(Square2dGeneric, RowsColsApartWriteThePadding) {
  Matrix2d m{7, 3, 6, 4};
  launch_2d(1, 1, [&](std::size_t c, std::size_t r) {
    if (r < m.rows && c < m.cols)
      m.y.data()[r * m.cols + c] = m.x[r * m.cols + c] * m.x[r * m.cols + c];
  });
  expect_generic_2d(
      m, "wrote into the padding between rows (row 0, columns 3 to 3): step between rows by ld");
}

TEST(Square2dGeneric, TransposedStores) {
  // Row and column swapped in y's index of a contiguous matrix: y[c * rows + r].
  Matrix2d m{5, 31, 31, 31};
  for (std::size_t r = 0; r < m.rows; ++r)
    for (std::size_t c = 0; c < m.cols; ++c)
      m.y[c * m.rows + r] = m.x[r * m.cols + c] * m.x[r * m.cols + c];
  expect_generic_2d(m, "the output is transposed");
}

TEST(Square2dGeneric, NoMistakeMatchesAnUnrelatedFailure) {
  // One element wrong in a big output: no entry of the catalogue may claim it.
  Matrix2d m{64, 100, 104, 100};
  for (std::size_t r = 0; r < m.rows; ++r)
    for (std::size_t c = 0; c < m.cols; ++c) m.store(r, c, r * m.ld_x + c);
  m.y[5 * m.ld_y + 7] += 1;
  const CheckResult r = m.check();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mistake, "") << r.report();
  EXPECT_NE(r.diagnosis.find("1 element of 6400 are wrong, in row 5 only"), std::string::npos)
      << r.report();
}

// The launch a GPU test would have observed, for the lifetime of the object.
struct ObservedLaunch {
  ObservedLaunch(std::size_t blocks, std::size_t threads) {
    lab05::inference::observed_launch() = [=] {
      return std::optional<lab05::inference::Grid1d>({blocks, threads});
    };
  }
  ~ObservedLaunch() { lab05::inference::observed_launch() = nullptr; }
};

TEST(SquareByLaunch, TheWrongElementsOfSomeThreadsOfEveryBlock) {
  // 4 blocks of 256; warp 1 of each block skips its element (a condition on threadIdx.x / 32).
  const std::size_t n = 1000, threads = 256;
  const std::vector<float> x = inputs(n);
  GuardedBuffer<float> y(n);
  launch(ceil_div(n, threads), threads, [&](std::size_t b, std::size_t t) {
    const std::size_t i = b * threads + t;
    if (i < n && t / 32 != 1) y[i] = x[i] * x[i];
  });
  const ObservedLaunch observed(4, 256);
  expect_named(x, y,
               "the elements of threads 32-63 (warp 1) of each block of 256 wrong, and every "
               "other element right");
}

TEST(SquareByLaunch, TheWrongElementsOfSomeBlocks) {
  // A grid-stride loop over 4 blocks of 128; block 2 doubles instead of squaring.
  const std::size_t n = 4099, threads = 128, blocks = 4;
  const std::vector<float> x = inputs(n);
  GuardedBuffer<float> y(n);
  launch(blocks, threads, [&](std::size_t b, std::size_t t) {
    for (std::size_t i = b * threads + t; i < n; i += blocks * threads)
      y[i] = b == 2 ? x[i] + x[i] : x[i] * x[i];
  });
  const ObservedLaunch observed(blocks, threads);
  expect_named(x, y, "the elements of block 2 of the 4 wrong, and every other element right");
}

TEST(SquareByLaunch, NoLaunchObservedNoObservation) {
  const std::size_t n = 1000, threads = 256;
  const std::vector<float> x = inputs(n);
  GuardedBuffer<float> y(n);
  launch(ceil_div(n, threads), threads, [&](std::size_t b, std::size_t t) {
    const std::size_t i = b * threads + t;
    if (i < n && t / 32 != 1) y[i] = x[i] * x[i];
  });
  const CheckResult result = lab05::oracle::check_square(x, y);
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.diagnosis.find("of each block"), std::string::npos) << result.report();
}

}  // namespace
