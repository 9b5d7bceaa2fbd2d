// Lab 04 visible tests: quantization against its specification (round half to even, saturation),
// the integer product against an exact integer oracle, and the float product of quantized matrices
// against the bound the handout derives. Each TEST is its own ctest test:
// `ctest --preset lab04 -R Quantize` runs the quantize ones.
#include "quantize.hpp"
#include "quantize_oracle.hpp"

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using lab04::QuantizedMatrix;
using workbook::as_span;
using workbook::GuardedBuffer;
using workbook::testing::Cases;
using Int8Vector = xt::xtensor<std::int8_t, 1>;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kFloatMax = std::numeric_limits<float>::max();

// Sizes 0..200 reach past three batches of 64 int8 lanes (AVX-512), so every tail of every SIMD
// width is tried, for floats and for bytes, plus a few large ones. A test checks them all, then
// reports its most telling failure (workbook::testing::Cases): the smallest sizes look alike
// whatever the mistake.
std::vector<std::size_t> sizes_with_every_tail() {
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 200; ++n) sizes.push_back(n);
  for (std::size_t n : {255, 256, 257, 1000, 4099, (1 << 20) + 13}) sizes.push_back(n);
  return sizes;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Expects `call` to throw std::invalid_argument whose message names `what` ("nan", "inf") and the
// index of the offending element.
template <class Call>
void expect_rejects(Call call, const std::string& what, std::size_t index,
                    const std::string& context) {
  try {
    call();
    ADD_FAILURE() << context << ": no exception; expected std::invalid_argument naming the " << what
                  << " at index " << index;
  } catch (const std::invalid_argument& e) {
    const std::string message = lowercase(e.what());
    EXPECT_NE(message.find(what), std::string::npos)
        << context << ": the message should say '" << what << "': " << e.what();
    EXPECT_NE(message.find(std::to_string(index)), std::string::npos)
        << context << ": the message should name index " << index << ": " << e.what();
  }
}

// Rejects a NaN at each of `positions` of an array of n in turn (`call(at, value)` runs the
// function with `value` there and returns whether it threw std::invalid_argument). Where some are
// rejected and others not, says what the split shows, before the failure of each position: seen
// only in the scalar tail (the SIMD loop's test never fires), only late in the array (a NaN flag
// that each batch overwrites keeps only the last batch's), or missed only at its end (the scalar
// tail does not check). Where none is, but an infinity in its place is: the check compares.
template <class Call>
void expect_nan_rejected_everywhere(std::size_t n, const std::vector<std::size_t>& positions,
                                    Call call, const std::string& function) {
  std::vector<std::size_t> missed, caught;
  for (std::size_t at : positions) (call(at, kNaN) ? caught : missed).push_back(at);
  if (caught.empty() && !missed.empty() && call(missed.front(), kInf)) {
    ADD_FAILURE() << function << " rejects an infinity at index " << missed.front()
                  << " but no NaN, there or anywhere: your check compares values (x > m, "
                     "std::max, |x| == inf, the max tested after the loop), and every comparison "
                     "with NaN is false, so a NaN slips through it (std::max(m, NaN) returns m). "
                     "Test each element itself with std::isnan (xsimd::isnan for a batch).";
    return;
  }
  if (missed.empty() || caught.empty()) return;
  auto list = [](const std::vector<std::size_t>& v) {
    std::string text;
    for (std::size_t k = 0; k < v.size(); ++k)
      text += (k == 0 ? "" : k + 1 == v.size() ? " and " : ", ") + std::to_string(v[k]);
    return text;
  };
  auto at = [&list](const std::vector<std::size_t>& v) {
    return (v.size() == 1 ? "index " : "indices ") + list(v);
  };
  const std::string split =
      function + " rejects a NaN at " + at(caught) + " but not at " + at(missed) + ": ";
  const std::size_t tail = lab04::mistakes::full_batches_end(n);  // the scalar tail starts here
  if (caught.front() >= tail && missed.back() < tail)
    ADD_FAILURE() << split << "only a NaN in the scalar tail (from index " << tail
                  << ", after the whole batches of " << lab04::mistakes::kLanes
                  << ") is seen, and none in any whole batch, the last one included: the SIMD "
                     "loop's NaN test never fires. Test each batch with xsimd::isnan(v) "
                     "(xsimd::any of it); a comparison such as v != v is false for NaN when it "
                     "is an ordered comparison, as xsimd's is.";
  else if (missed.back() < caught.front())
    ADD_FAILURE() << split
                  << "only a NaN late in the array is seen. A NaN flag that each batch "
                     "overwrites (nan = isnan(v)) keeps only the last batch's: combine it over "
                     "every batch (nan = nan | isnan(v)) and test it after the loop, or throw as "
                     "soon as a batch holds one.";
  else if (missed.front() > caught.back())
    ADD_FAILURE() << split
                  << "a NaN in the last elements is missed: the scalar tail after the SIMD loop "
                     "must check its elements too.";
  else
    ADD_FAILURE() << split << "check that every batch, and the tail, is tested for NaN.";
}

// --- symmetric_scale ---------------------------------------------------------------------------

TEST(SymmetricScale, IsMaxAbsOver127AtEverySize) {
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("symmetric_scale"), "size");
  for (std::size_t n : sizes_with_every_tail()) {
    cases.next_size(n);
    const workbook::Vector x = workbook::normal(n, rng);
    cases.check(
        lab04::oracle::check_symmetric_scale(as_span(x), lab04::symmetric_scale(as_span(x))));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(SymmetricScale, LargestMagnitudeAnywhereAndNegative) {
  // The largest magnitude is negative, and sits at each position in turn, the tail included. The
  // next largest, right after it, is negative too: every scale that misses a sign then differs.
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("symmetric_scale"), "position");
  for (std::size_t at = 0; at < 70; ++at) {
    cases.next("the largest magnitude, -3.5, at index " + std::to_string(at) + " of 70");
    workbook::Vector x = workbook::uniform(70, rng, -1, 1);
    x(at) = -3.5f;
    x((at + 1) % 70) = -2.0f;
    cases.check(
        lab04::oracle::check_symmetric_scale(as_span(x), lab04::symmetric_scale(as_span(x))));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(SymmetricScale, AllZeroOrEmptyIsOne) {
  const std::vector<float> zeros(37, 0.0f), negative_zeros(37, -0.0f), empty;
  EXPECT_CORRECT(lab04::oracle::check_symmetric_scale(zeros, lab04::symmetric_scale(zeros)))
      << "an all-zero tensor: the scale is defined as 1";
  EXPECT_CORRECT(
      lab04::oracle::check_symmetric_scale(negative_zeros, lab04::symmetric_scale(negative_zeros)))
      << "-0 is zero too";
  EXPECT_CORRECT(lab04::oracle::check_symmetric_scale(empty, lab04::symmetric_scale(empty)))
      << "an empty tensor: the scale is defined as 1";
}

TEST(SymmetricScale, UnderflowingQuotientIsOne) {
  // 2^-149 / 127 rounds to 0 in float32: a zero scale would divide by zero in quantize.
  const std::vector<float> tiny(20, std::numeric_limits<float>::denorm_min());
  workbook::CheckResult r =
      lab04::oracle::check_symmetric_scale(tiny, lab04::symmetric_scale(tiny));
  // A special case that gives an all-zero tensor its 1 but tests max |x| instead of the quotient
  // misses this one: the all-zero tensor tells the two apart.
  const std::vector<float> zeros(20, 0.0f);
  if (!r && lab04::symmetric_scale(tiny) == 0.0f && lab04::symmetric_scale(zeros) == 1.0f) {
    r.diagnosis =
        "your scale is 1 for an all-zero tensor, but 0 here, where max|x| = 2^-149 is not 0 and "
        "max|x| / 127 underflows to 0: your special case tests max|x| == 0 instead of the "
        "quotient. quantize.hpp defines the scale as 1 wherever max|x| / 127 is 0: test the "
        "quotient.";
    r.specificity = workbook::Specificity::mistake;
  }
  EXPECT_CORRECT(r);
}

TEST(SymmetricScale, HugeAndDenormalValues) {
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::adversarial(4099, rng, workbook::Specials::finite);
  EXPECT_CORRECT(
      lab04::oracle::check_symmetric_scale(as_span(x), lab04::symmetric_scale(as_span(x))));
  const std::vector<float> largest = {1.0f, -kFloatMax, 2.0f};
  EXPECT_CORRECT(lab04::oracle::check_symmetric_scale(largest, lab04::symmetric_scale(largest)));
}

TEST(SymmetricScale, RejectsNaNAnywhere) {
  expect_nan_rejected_everywhere(
      67, {0, 17, 33, 50, 63, 66},
      [](std::size_t at, float value) {
        std::vector<float> x(67, 1.0f);
        x[at] = value;
        try {
          lab04::symmetric_scale(x);
        } catch (const std::invalid_argument&) {
          return true;
        }
        return false;
      },
      "symmetric_scale");
  for (std::size_t at : {0, 17, 66}) {
    std::vector<float> x(67, 1.0f);
    x[at] = kNaN;
    expect_rejects([&] { lab04::symmetric_scale(x); }, "nan", at,
                   "symmetric_scale, NaN at " + std::to_string(at));
  }
}

TEST(SymmetricScale, RejectsInfinity) {
  std::vector<float> x(67, 1.0f);
  x[40] = -kInf;
  expect_rejects([&] { lab04::symmetric_scale(x); }, "inf", 40, "symmetric_scale, -inf at 40");
}

// --- quantize ----------------------------------------------------------------------------------

TEST(Quantize, MatchesOracleAtEverySize) {
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("quantize"), "size");
  for (std::size_t n : sizes_with_every_tail()) {
    cases.next_size(n);
    const workbook::Vector x = workbook::normal(n, rng);
    const float scale = lab04::oracle::symmetric_scale(as_span(x));
    GuardedBuffer<std::int8_t> q(n);
    lab04::quantize(as_span(x), scale, q.span());
    cases.check(lab04::oracle::check_quantize(as_span(x), scale, q));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Quantize, RoundsHalfToEven) {
  // Every tie k + 1/2 from -127.5 to 127.5. With a power-of-two scale, x / scale is exact, so each
  // quotient is exactly a tie: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2, 127.5 -> 128 -> 127. Two
  // ties far past the range, +-200.5 -> +-127, tell a missing clamp (200 wraps to -56) from a
  // clamp at +-127.5 (right there, wrong only at +-127.5).
  const float scale = 0.125f;
  std::vector<float> x;
  for (int k = -128; k <= 127; ++k) x.push_back((static_cast<float>(k) + 0.5f) * scale);
  for (float far : {-200.5f, 200.5f}) x.push_back(far * scale);
  GuardedBuffer<std::int8_t> q(x.size());
  lab04::quantize(x, scale, q.span());
  EXPECT_CORRECT(lab04::oracle::check_quantize(x, scale, q));
}

TEST(Quantize, SaturatesInsteadOfWrapping) {
  // Beyond +-127.5 steps every value becomes +-127: never -128, never wrapped around.
  const float scale = 0.5f;
  const std::vector<float> x = {127.5f * scale,
                                -127.5f * scale,  // ties that round to +-128: saturate to +-127
                                127.49f * scale,
                                -127.49f * scale,  // round to +-127 by themselves
                                128.0f * scale,   -128.0f * scale, 200.0f * scale,
                                -200.0f * scale,  // a cast wraps 200 to -56
                                255.0f * scale,   -256.0f * scale, 1e30f,          -1e30f,
                                kFloatMax,        -kFloatMax,      kInf,           -kInf};
  GuardedBuffer<std::int8_t> q(x.size());
  lab04::quantize(x, scale, q.span());
  EXPECT_CORRECT(lab04::oracle::check_quantize(x, scale, q));
}

TEST(Quantize, WithAGivenScaleManySaturate) {
  // A scale chosen elsewhere (calibrated on other data): values beyond 127 steps saturate.
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::normal(10007, rng, 0.0, 3.0);
  GuardedBuffer<std::int8_t> q(x.size());
  lab04::quantize(as_span(x), 0.01f, q.span());
  EXPECT_CORRECT(lab04::oracle::check_quantize(as_span(x), 0.01f, q));
}

TEST(Quantize, HugeTinyAndDenormalValues) {
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::adversarial(4099, rng, workbook::Specials::finite);
  Cases cases(lab04::oracle::where("quantize"), "scale");
  for (float scale : {lab04::oracle::symmetric_scale(as_span(x)), 1e-3f, 1e-40f}) {
    cases.next("scale " + lab04::oracle::show(scale));
    GuardedBuffer<std::int8_t> q(x.size());
    lab04::quantize(as_span(x), scale, q.span());
    cases.check(lab04::oracle::check_quantize(as_span(x), scale, q));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Quantize, UnalignedInputAndOutput) {
  auto rng = workbook::testing::rng();
  const std::size_t n = 1000;
  const workbook::Vector storage = workbook::normal(n + 16, rng);
  Cases cases(lab04::oracle::where("quantize"), "shift");
  for (std::size_t shift = 1; shift < 16; ++shift) {
    cases.next("offsets from a 64-byte boundary: x " + std::to_string(shift) + " floats, q " +
               std::to_string(64 - 3 * shift) + " bytes");
    const auto x = as_span(storage).subspan(shift, n);
    const float scale = lab04::oracle::symmetric_scale(x);
    GuardedBuffer<std::int8_t> q(n, /*misalign=*/64 - 3 * shift);
    lab04::quantize(x, scale, q.span());
    cases.check(lab04::oracle::check_quantize(x, scale, q));
  }
  EXPECT_ALL_CORRECT(cases);
}

// Outputs of more than 8 MiB: where a kernel may switch to streaming stores (lab 01, step 6),
// starting a few bytes past an aligned address.
constexpr std::size_t kLarge = (std::size_t{8} << 20) + 37;

TEST(Quantize, LargeAndUnaligned) {
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::normal(kLarge, rng);
  const float scale = lab04::oracle::symmetric_scale(as_span(x));
  GuardedBuffer<std::int8_t> q(kLarge, /*misalign=*/5);
  lab04::quantize(as_span(x), scale, q.span());
  EXPECT_CORRECT(lab04::oracle::check_quantize(as_span(x), scale, q));
}

TEST(Quantize, RejectsNaNAnywhere) {
  // A NaN has no integer value; the last position is in the scalar tail of any SIMD width.
  expect_nan_rejected_everywhere(
      131, {0, 33, 64, 100, 127, 130},
      [](std::size_t at, float value) {
        std::vector<float> x(131, 0.25f);
        x[at] = value;
        std::vector<std::int8_t> q(x.size());
        try {
          lab04::quantize(x, 0.5f, q);
        } catch (const std::invalid_argument&) {
          return true;
        }
        return false;
      },
      "quantize");
  for (std::size_t at : {0, 33, 130}) {
    std::vector<float> x(131, 0.25f);
    x[at] = at % 2 ? -kNaN : kNaN;
    std::vector<std::int8_t> q(x.size());
    expect_rejects([&] { lab04::quantize(x, 0.5f, q); }, "nan", at,
                   "quantize, NaN at " + std::to_string(at));
  }
}

TEST(Quantize, RejectsInvalidScaleAndSizes) {
  std::vector<float> x(8, 1.0f);
  std::vector<std::int8_t> q(8), shorter(7);
  for (float scale : {0.0f, -0.0f, -1.0f, kNaN, kInf})
    EXPECT_THROW(lab04::quantize(x, scale, q), std::invalid_argument) << "scale " << scale;
  EXPECT_THROW(lab04::quantize(x, 1.0f, shorter), std::invalid_argument);
}

TEST(Quantize, RoundTripIsWithinHalfAStep) {
  // The error model: x - dequantize(quantize(x)) is at most half a step, scale / 2 (plus the
  // float32 quotient's rounding, 127.5 u steps, and the product's, u |x|), for every x within the
  // range.
  auto rng = workbook::testing::rng();
  const workbook::Vector x = workbook::normal(100003, rng, 0.0, 2.0);
  const float scale = lab04::oracle::symmetric_scale(as_span(x));
  std::vector<std::int8_t> q(x.size());
  std::vector<float> back(x.size());
  lab04::quantize(as_span(x), scale, q);
  lab04::dequantize(q, scale, back);
  const double h = 0.5 + 128 * workbook::kFloatUnitRoundoff;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double error = std::fabs(static_cast<double>(back[i]) - x(i));
    ASSERT_LE(error, h * scale + workbook::kFloatUnitRoundoff * std::fabs(x(i)))
        << lab04::oracle::explain_round_trip(as_span(x), scale, q, back) << "x[" << i
        << "] = " << x(i) << " came back as " << back[i] << " (q = " << int{q[i]} << ", scale "
        << scale << "): more than half a step away";
  }
}

// --- dequantize --------------------------------------------------------------------------------

TEST(Dequantize, MatchesOracleAtEverySize) {
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("dequantize"), "size");
  for (std::size_t n : sizes_with_every_tail()) {
    cases.next_size(n);
    const Int8Vector q = workbook::int8_uniform(n, rng);
    const float scale = static_cast<float>(rng.uniform(1e-3, 1.0));
    GuardedBuffer<float> x(n);
    lab04::dequantize(as_span(q), scale, x.span());
    cases.check(lab04::oracle::check_dequantize(as_span(q), scale, x));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Dequantize, UnalignedInputAndOutput) {
  auto rng = workbook::testing::rng();
  const std::size_t n = 1000;
  const Int8Vector storage = workbook::int8_uniform(n + 64, rng);
  Cases cases(lab04::oracle::where("dequantize"), "shift");
  for (std::size_t shift = 1; shift < 64; shift += 7) {
    cases.next("offsets from a 64-byte boundary: q " + std::to_string(shift) + " bytes, x " +
               std::to_string(shift % 16) + " floats");
    const auto q = as_span(storage).subspan(shift, n);
    GuardedBuffer<float> x(n, shift % 16);
    lab04::dequantize(q, 0.03125f, x.span());
    cases.check(lab04::oracle::check_dequantize(q, 0.03125f, x));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(Dequantize, LargeAndUnaligned) {
  auto rng = workbook::testing::rng();
  const Int8Vector q = workbook::int8_uniform(kLarge / 4, rng);  // 8 MiB of floats out
  GuardedBuffer<float> x(q.size(), /*misalign=*/3);
  lab04::dequantize(as_span(q), 0.125f, x.span());
  EXPECT_CORRECT(lab04::oracle::check_dequantize(as_span(q), 0.125f, x));
}

TEST(Dequantize, RejectsInvalidScaleAndSizes) {
  std::vector<std::int8_t> q(8, 1);
  std::vector<float> x(8), longer(9);
  for (float scale : {0.0f, -2.0f, kNaN, -kInf})
    EXPECT_THROW(lab04::dequantize(q, scale, x), std::invalid_argument) << "scale " << scale;
  EXPECT_THROW(lab04::dequantize(q, 1.0f, longer), std::invalid_argument);
}

// --- quantize_rows -----------------------------------------------------------------------------

// Per-row quantization of a rows x cols matrix, as one of `cases`: every scale, then every value,
// against the oracle.
void check_rows(Cases& cases, std::span<const float> x, std::size_t rows, std::size_t cols) {
  cases.next(std::to_string(rows) + " x " + std::to_string(cols));
  std::vector<float> scales(rows, -1.0f);
  GuardedBuffer<std::int8_t> q(x.size());
  lab04::quantize_rows(x, cols, scales, q.span());
  cases.check(lab04::oracle::check_row_scales(x, cols, scales));
  cases.check(lab04::oracle::check_quantize(x, scales, cols, q, "quantize_rows"));
}

// The same, as a test of its own.
void expect_rows_match(std::span<const float> x, std::size_t rows, std::size_t cols) {
  Cases cases(lab04::oracle::where("quantize_rows"));
  check_rows(cases, x, rows, cols);
  EXPECT_ALL_CORRECT(cases);
}

TEST(QuantizeRows, EachRowHasItsOwnScale) {
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("quantize_rows"), "shape");
  for (auto [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1, 1}, {1, 67}, {67, 1}, {13, 100}, {64, 64}, {3, 1031}, {0, 5}}) {
    workbook::Vector x = workbook::normal(rows * cols, rng);
    // Rows of very different magnitudes, and an all-zero row (scale 1).
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c)
        x(r * cols + c) *= r % 3 == 2 ? 0.0f : std::pow(10.0f, float(r % 5) - 2);
    check_rows(cases, as_span(x), rows, cols);
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(QuantizeRows, AnOutlierCostsPrecisionOnlyInItsRow) {
  // One value of 1000 in row 0: per tensor, every row gets a step of 1000 / 127 and most small
  // values become 0; per row, the other rows keep their own fine steps.
  auto rng = workbook::testing::rng();
  const std::size_t rows = 16, cols = 256;
  workbook::Vector x = workbook::normal(rows * cols, rng);
  x(5) = 1000.0f;
  expect_rows_match(as_span(x), rows, cols);
  std::vector<float> scales(rows);
  std::vector<std::int8_t> q(x.size());
  lab04::quantize_rows(as_span(x), cols, scales, q);
  const float per_tensor = lab04::oracle::symmetric_scale(as_span(x));
  for (std::size_t r = 1; r < rows; ++r)
    EXPECT_LT(scales[r], per_tensor / 50)
        << "row " << r << " should not pay for the outlier of row 0";
}

TEST(QuantizeRows, LargeWithOddRows) {
  // More than 8 MiB out, rows of 4099 values: every row starts at another alignment.
  auto rng = workbook::testing::rng();
  const std::size_t rows = 2048, cols = 4099;
  const workbook::Vector x = workbook::normal(rows * cols, rng);
  expect_rows_match(as_span(x), rows, cols);
}

TEST(QuantizeRows, RejectsNaNInAnyRow) {
  std::vector<float> x(6 * 50, 1.0f), scales(6);
  std::vector<std::int8_t> q(x.size());
  x[4 * 50 + 49] = kNaN;
  EXPECT_THROW(lab04::quantize_rows(x, 50, scales, q), std::invalid_argument)
      << "a NaN in the last element of row 4";
}

TEST(QuantizeRows, RejectsMismatchedShapes) {
  std::vector<float> x(12), scales3(3), scales4(4);
  std::vector<std::int8_t> q(12), q11(11);
  EXPECT_THROW(lab04::quantize_rows(x, 5, scales3, q), std::invalid_argument)
      << "12 elements are not rows of 5";
  EXPECT_THROW(lab04::quantize_rows(x, 4, scales4, q), std::invalid_argument)
      << "3 rows need 3 scales";
  EXPECT_THROW(lab04::quantize_rows(x, 4, scales3, q11), std::invalid_argument) << "q must match x";
  EXPECT_THROW(lab04::quantize_rows(x, 0, scales3, q), std::invalid_argument) << "zero columns";
}

// --- quantized_relu ----------------------------------------------------------------------------

TEST(QuantizedRelu, MatchesOracleAtEverySize) {
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("quantized_relu"), "size");
  for (std::size_t n : sizes_with_every_tail()) {
    cases.next_size(n);
    const Int8Vector q = workbook::int8_uniform(n, rng);
    GuardedBuffer<std::int8_t> out(n);
    lab04::quantized_relu(as_span(q), out.span());
    cases.check(lab04::oracle::check_quantized_relu(as_span(q), out));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(QuantizedRelu, InPlaceAndUnaligned) {
  auto rng = workbook::testing::rng();
  const Int8Vector q = workbook::int8_uniform(1031, rng);
  Cases cases(lab04::oracle::where("quantized_relu"), "shift");
  for (std::size_t shift : {0, 1, 13, 63}) {
    cases.next("in place, " + std::to_string(shift) + " bytes past a 64-byte boundary");
    GuardedBuffer<std::int8_t> inout(q.size(), shift);
    std::copy(q.begin(), q.end(), inout.data());
    lab04::quantized_relu(inout.span(), inout.span());
    cases.check(lab04::oracle::check_quantized_relu(as_span(q), inout));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(QuantizedRelu, LargeAndUnaligned) {
  auto rng = workbook::testing::rng();
  const Int8Vector q = workbook::int8_uniform(kLarge, rng);
  GuardedBuffer<std::int8_t> out(q.size(), /*misalign=*/7);
  lab04::quantized_relu(as_span(q), out.span());
  EXPECT_CORRECT(lab04::oracle::check_quantized_relu(as_span(q), out));
}

TEST(QuantizedRelu, RejectsMismatchedOrOverlappingBuffers) {
  std::vector<std::int8_t> q(10), out(9), both(11);
  EXPECT_THROW(lab04::quantized_relu(q, out), std::invalid_argument);
  EXPECT_THROW(lab04::quantized_relu(std::span<const std::int8_t>(both).first(10),
                                     std::span<std::int8_t>(both).last(10)),
               std::invalid_argument);
}

// --- matmul_int8 -------------------------------------------------------------------------------

// Runs matmul_int8 on a (m x depth) and b (n x depth) into c, and checks c against the exact
// oracle. c may hold anything before: it must be overwritten.
workbook::CheckResult multiply_and_check(const Int8Vector& a, const Int8Vector& b, std::size_t m,
                                         std::size_t n, std::size_t depth,
                                         GuardedBuffer<std::int32_t>& c) {
  lab04::matmul_int8(as_span(a), as_span(b), c.span(), m, n, depth);
  return lab04::oracle::check_matmul_int8(
      as_span(a), as_span(b), lab04::oracle::product(as_span(a), as_span(b), m, n, depth), c, m, n,
      depth);
}

// A random m x depth times (n x depth)^T product against the exact oracle, as one of `cases`.
void check_product(Cases& cases, std::size_t m, std::size_t n, std::size_t depth,
                   workbook::Rng& rng) {
  cases.next("m = " + std::to_string(m) + ", n = " + std::to_string(n) +
             ", depth = " + std::to_string(depth));
  const Int8Vector a = workbook::int8_uniform(m * depth, rng);
  const Int8Vector b = workbook::int8_uniform(n * depth, rng);
  GuardedBuffer<std::int32_t> c(m * n);
  cases.check(multiply_and_check(a, b, m, n, depth, c));
}

TEST(MatmulInt8, EverySmallShape) {
  // Remainders of every block size a kernel might use: rows 1..13, columns around 16, 32, 48 and
  // 64, depths around multiples of 4 and 64.
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("matmul_int8"), "shape");
  for (std::size_t m : {1, 2, 3, 5, 6, 7, 13})
    for (std::size_t n : {1, 15, 16, 17, 33, 47, 48, 49, 65})
      for (std::size_t depth : {1, 2, 3, 4, 5, 7, 8, 63, 64, 65})
        check_product(cases, m, n, depth, rng);
  EXPECT_ALL_CORRECT(cases);
}

TEST(MatmulInt8, SquareTallAndWide) {
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("matmul_int8"), "shape");
  for (auto [m, n, depth] :
       std::vector<std::tuple<std::size_t, std::size_t, std::size_t>>{{64, 64, 64},
                                                                      {100, 130, 257},
                                                                      {1000, 3, 37},
                                                                      {3, 1000, 37},
                                                                      {257, 129, 1031},
                                                                      {1, 1, 5000}})
    check_product(cases, m, n, depth, rng);
  EXPECT_ALL_CORRECT(cases);
}

TEST(MatmulInt8, ExtremeValues) {
  // Only -127 and 127: every product is +-16129, the largest there is.
  auto rng = workbook::testing::rng();
  const std::size_t m = 37, n = 70, depth = 1000;
  Int8Vector a = workbook::int8_uniform(m * depth, rng, 0, 1),
             b = workbook::int8_uniform(n * depth, rng, 0, 1);
  for (auto& v : a) v = v ? 127 : -127;
  for (auto& v : b) v = v ? 127 : -127;
  GuardedBuffer<std::int32_t> c(m * n);
  EXPECT_CORRECT(multiply_and_check(a, b, m, n, depth, c));
}

TEST(MatmulInt8, SumsBeyondInt16AreExact) {
  // 127 * 127 * 3 = 48387 > 32767: an int16 sum overflows from depth 3 on. With depth 4096 the
  // sums reach 127 * 127 * 4096 = 66064384, far beyond int16, well within int32.
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("matmul_int8"), "depth");
  for (std::size_t depth : {3, 4, 4096}) {
    cases.next("depth " + std::to_string(depth) + ": every sum is +-" +
               std::to_string(16129 * depth));
    const std::size_t m = 5, n = 19;
    Int8Vector a = workbook::int8_uniform(m * depth, rng, 127, 127),
               b = workbook::int8_uniform(n * depth, rng, 127, 127);
    for (std::size_t k = 0; k < depth; ++k) b(3 * depth + k) = -127;  // one column of negative sums
    GuardedBuffer<std::int32_t> c(m * n);
    cases.check(multiply_and_check(a, b, m, n, depth, c));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(MatmulInt8, ExactAtTheLargestDepth) {
  // depth = kMaxDepth = 133143 with every product +-16129: sums of +-2147463447, within 20200 of
  // INT32_MAX. A kernel that adds 128 to A (for vpdpbusd) passes 2^31 on the way: its int32
  // arithmetic wraps around, and the correction brings it back exactly (see the handout).
  const std::size_t m = 2, n = 3, depth = lab04::kMaxDepth;
  Int8Vector a = xt::xtensor<std::int8_t, 1>::from_shape({m * depth});
  Int8Vector b = xt::xtensor<std::int8_t, 1>::from_shape({n * depth});
  for (std::size_t k = 0; k < depth; ++k) {
    a(k) = 127;
    a(depth + k) = -127;
    b(k) = 127;
    b(depth + k) = -127;
    b(2 * depth + k) = k % 2 ? 127 : -127;
  }
  GuardedBuffer<std::int32_t> c(m * n);
  EXPECT_CORRECT(multiply_and_check(a, b, m, n, depth, c));
}

TEST(MatmulInt8, ZeroDepthGivesZeros) {
  // An empty sum is 0: the output must still be written.
  GuardedBuffer<std::int32_t> c(3 * 4);
  lab04::matmul_int8({}, {}, c.span(), 3, 4, 0);
  EXPECT_CORRECT(
      lab04::oracle::check_matmul_int8({}, {}, std::vector<std::int64_t>(12, 0), c, 3, 4, 0));
}

TEST(MatmulInt8, OverwritesStaleOutput) {
  auto rng = workbook::testing::rng();
  const std::size_t m = 9, n = 21, depth = 30;
  const Int8Vector a = workbook::int8_uniform(m * depth, rng),
                   b = workbook::int8_uniform(n * depth, rng);
  GuardedBuffer<std::int32_t> c(m * n);
  std::fill(c.data(), c.data() + m * n, 1000);  // C is overwritten, not accumulated into
  EXPECT_CORRECT(multiply_and_check(a, b, m, n, depth, c));
}

TEST(MatmulInt8, RejectsDepthBeyondTheInt32Bound) {
  const std::size_t depth = lab04::kMaxDepth + 1;
  const std::vector<std::int8_t> a(depth, 1), b(depth, 1);
  std::vector<std::int32_t> c(1);
  EXPECT_THROW(lab04::matmul_int8(a, b, c, 1, 1, depth), std::invalid_argument);
}

TEST(MatmulInt8, RejectsMinus128AndMismatchedSizes) {
  std::vector<std::int8_t> a(2 * 3, 1), b(4 * 3, 1);
  std::vector<std::int32_t> c(2 * 4);
  b[7] = -128;
  EXPECT_THROW(lab04::matmul_int8(a, b, c, 2, 4, 3), std::invalid_argument) << "b[7] = -128";
  b[7] = 1;
  EXPECT_THROW(lab04::matmul_int8(a, b, c, 2, 4, 4), std::invalid_argument)
      << "depth 4 does not match";
  EXPECT_THROW(lab04::matmul_int8(a, b, std::span<std::int32_t>(c).first(7), 2, 4, 3),
               std::invalid_argument)
      << "c too small";
}

// --- quantized_matmul --------------------------------------------------------------------------

// Quantized operands with their scales, kept alive together.
struct Quantized {
  Int8Vector values;
  std::vector<float> scales;
  std::size_t rows, cols;
  QuantizedMatrix view() const { return {as_span(values), scales, rows, cols}; }
};

Quantized random_quantized(std::size_t rows, std::size_t cols, bool per_row, workbook::Rng& rng) {
  Quantized q{workbook::int8_uniform(rows * cols, rng), std::vector<float>(per_row ? rows : 1),
              rows, cols};
  for (float& s : q.scales) s = static_cast<float>(std::exp(rng.uniform(-6, 3)));  // 0.0025 .. 20
  return q;
}

TEST(QuantizedMatmul, IsTheScaledIntegerProduct) {
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("quantized_matmul"));
  for (auto [m, n, depth] : std::vector<std::tuple<std::size_t, std::size_t, std::size_t>>{
           {1, 1, 1}, {7, 17, 33}, {64, 48, 100}, {33, 65, 129}})
    for (bool per_row_a : {false, true})
      for (bool per_row_b : {false, true}) {
        cases.next(std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(depth) +
                   ", A " + (per_row_a ? "per row" : "per tensor") + ", B " +
                   (per_row_b ? "per row" : "per tensor"));
        const Quantized a = random_quantized(m, depth, per_row_a, rng),
                        b = random_quantized(n, depth, per_row_b, rng);
        GuardedBuffer<float> c(m * n);
        lab04::quantized_matmul(a.view(), b.view(), c.span());
        const auto exact =
            lab04::oracle::product(as_span(a.values), as_span(b.values), m, n, depth);
        cases.check(lab04::oracle::check_quantized_matmul(a.view(), b.view(), exact, c));
      }
  // Values near the top of int8 over a long depth: sums of products past 2^24, where a float32
  // holds integers only to within a few units. The integer sum must be exact before it is
  // converted (once) and scaled; intermediate terms rounded to float first no longer cancel.
  {
    const std::size_t m = 8, n = 8, depth = 2048;
    cases.next(std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(depth) +
               ", B's values near +127");
    const Quantized a = random_quantized(m, depth, true, rng);
    Quantized b = random_quantized(n, depth, true, rng);
    for (std::int8_t& v : b.values) v = static_cast<std::int8_t>(120 + (v & 7));  // 120 .. 127
    GuardedBuffer<float> c(m * n);
    lab04::quantized_matmul(a.view(), b.view(), c.span());
    const auto exact = lab04::oracle::product(as_span(a.values), as_span(b.values), m, n, depth);
    cases.check(lab04::oracle::check_quantized_matmul(a.view(), b.view(), exact, c));
  }
  EXPECT_ALL_CORRECT(cases);
}

// x_a (m x depth) and x_b (n x depth) in float, quantized per row (or per tensor) by your code.
struct QuantizedProduct {
  workbook::Vector xa, xb;
  Quantized a, b;
};

QuantizedProduct quantize_operands(std::size_t m, std::size_t n, std::size_t depth, bool per_row,
                                   workbook::Rng& rng) {
  QuantizedProduct p{
      workbook::normal(m * depth, rng),
      workbook::normal(n * depth, rng),
      {Int8Vector::from_shape({m * depth}), std::vector<float>(per_row ? m : 1), m, depth},
      {Int8Vector::from_shape({n * depth}), std::vector<float>(per_row ? n : 1), n, depth}};
  for (auto [x, q] : {std::pair{&p.xa, &p.a}, std::pair{&p.xb, &p.b}}) {
    if (per_row) {
      lab04::quantize_rows(as_span(*x), depth, q->scales, as_span(q->values));
    } else {
      q->scales[0] = lab04::symmetric_scale(as_span(*x));
      lab04::quantize(as_span(*x), q->scales[0], as_span(q->values));
    }
  }
  return p;
}

TEST(QuantizedMatmul, AccuracyAgainstFloat32WithinTheDerivedBound) {
  // The error of the whole pipeline (quantize_rows, quantized_matmul) against the float64 product
  // of the original floats, element by element, within the worst-case bound of the handout.
  auto rng = workbook::testing::rng();
  Cases cases(lab04::oracle::where("quantized_matmul"));
  for (bool per_row : {true, false}) {
    cases.next(per_row ? "per row" : "per tensor");
    const std::size_t m = 96, n = 80, depth = 512;
    const QuantizedProduct p = quantize_operands(m, n, depth, per_row, rng);
    GuardedBuffer<float> c(m * n);
    lab04::quantized_matmul(p.a.view(), p.b.view(), c.span());
    const auto bound =
        lab04::oracle::accuracy_bound(as_span(p.xa), as_span(p.xb), p.a.view(), p.b.view());
    cases.check(lab04::oracle::check_accuracy(bound, m, n, c));
  }
  EXPECT_ALL_CORRECT(cases);
}

TEST(QuantizedMatmul, TypicalErrorFollowsTheModel) {
  // The worst-case bound adds every rounding error with the same sign; independent errors add like
  // a random walk. The handout's model predicts the root-mean-square error from the scales and the
  // norms of the rows; over 24576 elements the measurement sits close to it (not within a factor 2
  // means the quantization or the scales are off).
  auto rng = workbook::testing::rng();
  const std::size_t m = 128, n = 192, depth = 768;
  const QuantizedProduct p = quantize_operands(m, n, depth, true, rng);
  GuardedBuffer<float> c(m * n);  // a crash report can then say where a stray write went
  lab04::quantized_matmul(p.a.view(), p.b.view(), c.span());
  const auto bound =
      lab04::oracle::accuracy_bound(as_span(p.xa), as_span(p.xb), p.a.view(), p.b.view());
  double sum_sq = 0, sum_sq_exact = 0;
  for (std::size_t i = 0; i < m * n; ++i) {
    sum_sq += (c[i] - bound.exact[i]) * (c[i] - bound.exact[i]);
    sum_sq_exact += bound.exact[i] * bound.exact[i];
  }
  const double rms = std::sqrt(sum_sq / static_cast<double>(m * n));
  std::cout << "quantized_matmul " << m << " x " << n << " x " << depth
            << ", per-row scales: RMS error " << rms << ", model " << bound.predicted_rms
            << " (ratio " << rms / bound.predicted_rms << "); relative Frobenius error "
            << std::sqrt(sum_sq / sum_sq_exact) << "\n";
  EXPECT_LE(rms, 2 * bound.predicted_rms)
      << lab04::oracle::explain_typical_error(bound, c.span(), rms);
  EXPECT_GE(rms, 0.5 * bound.predicted_rms)
      << lab04::oracle::explain_typical_error(bound, c.span(), rms);
}

TEST(QuantizedMatmul, RejectsMismatchedShapesAndScales) {
  const std::vector<std::int8_t> a(6, 1), b(12, 1);
  const std::vector<float> one = {0.5f}, two = {0.5f, 0.25f}, three = {1, 1, 1}, bad = {0.0f};
  std::vector<float> c(2 * 4);
  EXPECT_NO_THROW(lab04::quantized_matmul({a, two, 2, 3}, {b, one, 4, 3}, c)) << "a valid call";
  EXPECT_THROW(lab04::quantized_matmul({a, three, 2, 3}, {b, one, 4, 3}, c), std::invalid_argument)
      << "3 scales for 2 rows";
  EXPECT_THROW(lab04::quantized_matmul({a, bad, 2, 3}, {b, one, 4, 3}, c), std::invalid_argument)
      << "a zero scale";
  EXPECT_THROW(lab04::quantized_matmul({a, one, 3, 2}, {b, one, 4, 3}, c), std::invalid_argument)
      << "depths 2 and 3";
  EXPECT_THROW(
      lab04::quantized_matmul({a, one, 2, 3}, {b, one, 4, 3}, std::span<float>(c).first(7)),
      std::invalid_argument)
      << "c too small";
}

}  // namespace
