// Lab 05 hidden tests, sealed: square, square_2d and time_launches run in a worker process that
// holds the student's code, on device copies of the buffers this checker fills (the worker copies
// them to the GPU and back); the inputs, the oracle and the verdict stay here. Beyond the visible
// tests they check sizes whose grids take many waves of the GPU, inputs the kernel cannot have
// modified (the device copy of x comes back too), no write outside y in device memory (canaries
// around each device copy), no result kept from one call to the next, and time_launches on
// durations it returned to a process it cannot reach.
#include "square_oracle.hpp"
#include "timing_checks.hpp"

#include <grade/sealed.hpp>

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <vector>

namespace {

using workbook::sealed::input;
using workbook::sealed::output;
using workbook::sealed::Region;
using workbook::sealed::Worker;

// Sizes the visible tests do not use. The largest need many waves of a large GPU (an H100 runs
// about 270k threads at once): a grid sized for one wave, or a grid-stride loop that does not loop,
// leaves elements unwritten there.
std::vector<std::size_t> sizes() {
  return {0,
          1,
          2,
          3,
          5,
          6,
          9,
          31,
          33,
          63,
          65,
          97,
          130,
          511,
          513,
          2047,
          4101,
          65539,
          1000003,
          (1 << 22) + 3,
          (1 << 24) + 5};
}

std::vector<float> values(const workbook::Vector& v) {
  return {v.begin(), v.end()};
}

void put(Region<float>& r, const std::vector<float>& v) {
  std::copy(v.begin(), v.end(), r.data());
}

::testing::AssertionResult unchanged(const std::vector<float>& before, const Region<float>& after,
                                     const char* function, const char* name) {
  return workbook::testing::correct(
      workbook::check_unchanged(before, after.span(), lab05::oracle::where(function), name));
}

// --- square
// ------------------------------------------------------------------------------------------

TEST(Square, MatchesOracle) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (std::size_t n : sizes()) {
    worker.reset();
    const std::size_t x_shift = n % 4, y_shift = (n / 4) % 4;
    const std::vector<float> x = values(workbook::normal(n, rng));
    Region<float> xr = worker.alloc<float>(n), yr = worker.alloc<float>(n);
    put(xr, x);
    ASSERT_CALL(worker.call("square", {input(xr, "x"), output(yr, "y"), x_shift, y_shift}))
        << "n = " << n << ", x starts " << x_shift << " and y " << y_shift
        << " floats past a 16-byte boundary";
    ASSERT_CORRECT(lab05::oracle::check_square(x, yr.copy()))
        << "n = " << n << ", x starts " << x_shift << " and y " << y_shift
        << " floats past a 16-byte boundary";
  }
}

TEST(Square, SpecialValues) {
  auto rng = workbook::testing::rng();
  Worker worker;
  std::vector<float> x = values(workbook::adversarial(65539, rng, workbook::Specials::all));
  for (std::size_t i = 0; i < 64; ++i)
    x[x.size() - 1 - i] = (i % 2 ? -1 : 1) * float(1e19 * (i + 1));
  Region<float> xr = worker.alloc<float>(x.size()), yr = worker.alloc<float>(x.size());
  put(xr, x);
  ASSERT_CALL(worker.call("square", {input(xr, "x"), output(yr, "y"), 2, 1}));
  EXPECT_CORRECT(lab05::oracle::check_square(x, yr.copy()));
}

TEST(Square, InPlace) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (std::size_t n : {7, 1000003}) {
    worker.reset();
    const std::vector<float> x = values(workbook::normal(n, rng));
    Region<float> xy = worker.alloc<float>(n);
    put(xy, x);
    ASSERT_CALL(worker.call("square", {input(xy, "x"), input(xy, "y (the same buffer)"), 3, 3}))
        << "in place, n = " << n;
    ASSERT_CORRECT(lab05::oracle::check_square(x, xy.copy())) << "in place, n = " << n;
  }
}

TEST(Square, LeavesInputUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const std::vector<float> x = values(workbook::adversarial(1000003, rng));
  Region<float> xr = worker.alloc<float>(x.size()), yr = worker.alloc<float>(x.size());
  put(xr, x);
  ASSERT_CALL(worker.call("square", {input(xr, "x"), output(yr, "y"), 0, 0}));
  EXPECT_TRUE(unchanged(x, xr, "square", "x"));
  EXPECT_CORRECT(lab05::oracle::check_square(x, yr.copy()));
}

TEST(Square, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Region<float> xr = worker.alloc<float>(65539), yr = worker.alloc<float>(65539);
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> x = values(workbook::normal(65539, rng));
    put(xr, x);
    ASSERT_CALL(worker.call("square", {input(xr, "x"), output(yr, "y"), 1, 2}));
    ASSERT_CORRECT(lab05::oracle::check_square(x, yr.copy()))
        << "call " << round + 1
        << " on the same device buffers with new values: a result kept from an earlier call?";
  }
}

// --- square_2d
// ---------------------------------------------------------------------------------------

struct Shape {
  std::size_t rows, cols, ld_x, ld_y;
};

// Rows that do not start on a 16-byte boundary, row lengths past a block, and a matrix of many
// waves.
const Shape kShapes[] = {{1, 1, 1, 1},          {3, 5, 8, 7},           {2, 1031, 1031, 1040},
                         {1000, 333, 335, 340}, {17, 4099, 4100, 4103}, {4096, 1023, 1024, 1030}};

std::size_t extent(std::size_t rows, std::size_t cols, std::size_t ld) {
  return rows == 0 ? 0 : (rows - 1) * ld + cols;
}

void square_2d_of(Worker& worker, const Shape& s, std::size_t x_shift, std::size_t y_shift,
                  bool check_input) {
  auto rng = workbook::testing::rng();
  worker.reset();
  const std::vector<float> x = values(workbook::normal(extent(s.rows, s.cols, s.ld_x), rng));
  Region<float> xr = worker.alloc<float>(x.size()),
                yr = worker.alloc<float>(extent(s.rows, s.cols, s.ld_y));
  put(xr, x);
  ASSERT_CALL(worker.call("square_2d", {input(xr, "x"), output(yr, "y"), s.ld_x, s.ld_y, s.rows,
                                        s.cols, x_shift, y_shift}))
      << s.rows << " x " << s.cols << ", ld_x = " << s.ld_x << ", ld_y = " << s.ld_y;
  ASSERT_CORRECT(lab05::oracle::check_square_2d(x, s.ld_x, yr.copy(), s.ld_y, s.rows, s.cols))
      << s.rows << " x " << s.cols << ", ld_x = " << s.ld_x << ", ld_y = " << s.ld_y;
  if (check_input) {
    ASSERT_TRUE(unchanged(x, xr, "square_2d", "x"));
  }
}

TEST(Square2d, MatchesOracle) {
  Worker worker;
  for (const Shape& s : kShapes) square_2d_of(worker, s, s.cols % 4, s.rows % 4, false);
}

TEST(Square2d, LeavesInputAndPaddingUnchanged) {
  Worker worker;
  square_2d_of(worker, {300, 257, 260, 263}, 1, 3, true);
}

TEST(Square2d, FreshResultsEachCall) {
  Worker worker;
  for (int round = 0; round < 3; ++round) square_2d_of(worker, {64, 100, 101, 103}, 0, 0, false);
}

// --- time_launches
// -----------------------------------------------------------------------------------

// Work of known length (1 ms, then 3 ms, alternating, after a cold first launch) timed in the
// worker; the durations come back here. Judged with a wider band than the visible tests' 2%: the
// GPU is shared with the grader's other work (a faulting kernel of the student's square, just
// before, slows the next milliseconds by a few percent), and every classic mistake is off by far
// more (half the time or less, twice or more, the cold launch's 20 ms).
::testing::AssertionResult times_known_work(Worker& worker) {
  const std::vector<double> lengths = {1.0, 3.0};
  const int warmup = 2, runs = 6;
  worker.reset();
  Region<float> ms = worker.alloc<float>(runs);
  const auto reply = worker.call(
      "time_launches", {output(ms, "the durations"), warmup, runs, lengths[0], lengths[1]});
  if (!reply.ok) return workbook::sealed::succeeded(reply);
  if (reply.value(0) != runs)
    return ::testing::AssertionFailure()
           << "time_launches(launch, " << warmup << ", " << runs << ") returned " << reply.value(0)
           << " durations." << lab05::timing_checks::kEdit;
  if (reply.value(1) != warmup + runs)
    return ::testing::AssertionFailure()
           << "launch must be called warmup + runs = " << warmup + runs << " times; it was called "
           << reply.value(1) << " times." << lab05::timing_checks::kEdit;
  const lab05::timing_checks::KnownWork work(lengths);
  for (int i = 0; i < runs; ++i) {
    // Launch 0 is the cold one, launches 1 .. warmup - 1 the rest of the warm-up: timed run i is
    // launch warmup + i.
    const double want = work.ms_of(warmup + i), got = ms.data()[i];
    if (got >= 0.98 * want && got <= 1.1 * want + 0.05) continue;
    return lab05::timing_checks::close_to(ms.data()[i], want) << " (timed run " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

TEST(TimeLaunches, TimesKnownWorkReturnedToAnotherProcess) {
  // A second attempt when the first is off: the GPU is shared with the grader's other work (a
  // process ending just before may still hold it), and a right time_launches passes either; a wrong
  // one fails both.
  Worker worker;
  if (times_known_work(worker)) return;
  EXPECT_TRUE(times_known_work(worker));
}

}  // namespace
