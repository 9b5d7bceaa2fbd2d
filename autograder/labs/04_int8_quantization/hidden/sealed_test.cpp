// Lab 04 hidden tests, sealed: each kernel runs in a worker process that holds the student's code;
// the inputs, the oracle and the verdict stay here. Beyond the visible tests, they check what a
// kernel could fake in its own process: outputs against inputs the kernel cannot have modified (the
// checker keeps a private copy), no write outside the outputs (canaries in shared memory), and no
// result kept from one call to the next (the same buffers, new values); and, on inputs the visible
// tests do not use, exactness against the oracle, saturation far beyond the scale and rounding ties
// at scales that are not powers of two.
#include "quantize_oracle.hpp"

#include <grade/sealed.hpp>

#include <workbook/tensor.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

namespace {

using workbook::sealed::input;
using workbook::sealed::output;
using workbook::sealed::Region;
using workbook::sealed::Reply;
using workbook::sealed::Worker;
using Bytes = std::vector<std::int8_t>;
using Floats = std::vector<float>;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kFloatMax = std::numeric_limits<float>::max();

// Every tail of every SIMD width up to two AVX-512 batches of bytes and one more, then sizes the
// visible tests do not use.
std::vector<std::size_t> sizes() {
  std::vector<std::size_t> s;
  for (std::size_t n = 0; n <= 130; ++n) s.push_back(n);
  for (std::size_t n : {191, 192, 193, 4097, 65536 + 61}) s.push_back(n);
  return s;
}

template <class E>
auto values(const E& e) {
  return std::vector<typename E::value_type>(e.begin(), e.end());
}
Bytes int8s(std::size_t n, workbook::Rng& rng, int lo = -127, int hi = 127) {
  return values(workbook::int8_uniform(n, rng, lo, hi));
}

template <class T>
void put(Region<T>& r, const std::vector<T>& v) {
  std::copy(v.begin(), v.end(), r.data());
}

// An input the kernel must leave as it was (it takes it as a const span). Bytes are compared as
// floats (every int8 is exact in float), with the harness's own check and message.
::testing::AssertionResult unchanged(const Floats& before, const Region<float>& after,
                                     const char* function, const char* name) {
  return workbook::testing::correct(
      workbook::check_unchanged(before, after.span(), lab04::oracle::where(function), name));
}
::testing::AssertionResult unchanged(const Bytes& before, const Region<std::int8_t>& after,
                                     const char* function, const char* name) {
  const Floats b(before.begin(), before.end()), a(after.span().begin(), after.span().end());
  return workbook::testing::correct(
      workbook::check_unchanged(b, a, lab04::oracle::where(function), name));
}

// An argument check: the call must throw std::invalid_argument.
::testing::AssertionResult rejected(const Reply& reply, const std::string& call) {
  if (reply.kind == "invalid_argument") return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << call << " must throw std::invalid_argument; got: "
         << (reply.ok ? std::string("a normal return") : reply.message);
}

const char* kFresh = "on the same buffers with new values: a result kept from an earlier call?";

// --- symmetric_scale
// ------------------------------------------------------------------------------

Reply scale_of(Worker& worker, Region<float>& x) {
  return worker.call("symmetric_scale", {input(x, "x")});
}
float returned(const Reply& reply) {
  return static_cast<float>(reply.value());
}

TEST(SymmetricScale, MatchesOracle) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (std::size_t n : sizes()) {
    worker.reset();
    Floats x = values(workbook::uniform(n, rng, -2, 2));
    if (n > 0) x[n - 1] = -3.0f;  // the largest magnitude, negative, in the tail
    Region<float> xr = worker.alloc<float>(n, n % 16);
    put(xr, x);
    const Reply reply = scale_of(worker, xr);
    ASSERT_CALL(reply) << "n = " << n;
    ASSERT_CORRECT(lab04::oracle::check_symmetric_scale(x, returned(reply))) << "n = " << n;
  }
}

TEST(SymmetricScale, ExtremeMagnitudes) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (const Floats& x : {values(workbook::adversarial(3001, rng, workbook::Specials::finite)),
                          Floats(50, std::numeric_limits<float>::denorm_min()), Floats(77, -0.0f),
                          Floats{kFloatMax, -kFloatMax, 1.0f}}) {
    worker.reset();
    Region<float> xr = worker.alloc<float>(x.size(), 3);
    put(xr, x);
    const Reply reply = scale_of(worker, xr);
    ASSERT_CALL(reply) << "n = " << x.size();
    ASSERT_CORRECT(lab04::oracle::check_symmetric_scale(x, returned(reply)));
  }
}

TEST(SymmetricScale, LeavesInputUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const Floats x = values(workbook::adversarial(2053, rng, workbook::Specials::finite));
  Region<float> xr = worker.alloc<float>(x.size(), 1);
  put(xr, x);
  const Reply reply = scale_of(worker, xr);
  ASSERT_CALL(reply);
  EXPECT_TRUE(unchanged(x, xr, "symmetric_scale", "x"));
  EXPECT_CORRECT(lab04::oracle::check_symmetric_scale(x, returned(reply)));
}

TEST(SymmetricScale, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Region<float> xr = worker.alloc<float>(999);
  for (int round = 0; round < 3; ++round) {
    const Floats x = values(workbook::normal(999, rng, 0.0, round + 1.0));
    put(xr, x);
    const Reply reply = scale_of(worker, xr);
    ASSERT_CALL(reply);
    ASSERT_CORRECT(lab04::oracle::check_symmetric_scale(x, returned(reply)))
        << "call " << round + 1 << " " << kFresh;
  }
}

TEST(SymmetricScale, RejectsNaNAndInfinity) {
  Worker worker;
  for (const float special : {kNaN, kInf, -kInf}) {
    Floats x(131, 0.5f);
    x[129] = special;  // in the scalar tail of any SIMD width
    worker.reset();
    Region<float> xr = worker.alloc<float>(x.size());
    put(xr, x);
    EXPECT_TRUE(rejected(scale_of(worker, xr), "symmetric_scale of 131 values with " +
                                                   std::to_string(special) + " at index 129"));
  }
}

// --- quantize
// -------------------------------------------------------------------------------------

Reply quantize(Worker& worker, Region<float>& x, float scale, Region<std::int8_t>& q) {
  return worker.call("quantize", {input(x, "x"), scale, output(q, "q")});
}

// Quantizes x with `scale` in the worker and checks q against the oracle.
::testing::AssertionResult quantizes_correctly(Worker& worker, const Floats& x, float scale,
                                               std::size_t misalign = 0) {
  worker.reset();
  Region<float> xr = worker.alloc<float>(x.size(), misalign % 16);
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(x.size(), misalign * 7 % 64);
  put(xr, x);
  if (const Reply reply = quantize(worker, xr, scale, qr); !reply.ok)
    return ::testing::AssertionFailure() << reply.message;
  return workbook::testing::correct(lab04::oracle::check_quantize(x, scale, qr.copy()));
}

TEST(Quantize, MatchesOracle) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (std::size_t n : sizes()) {
    const Floats x = values(workbook::uniform(n, rng, -5, 5));
    ASSERT_TRUE(quantizes_correctly(worker, x, lab04::oracle::symmetric_scale(x), n))
        << "n = " << n;
  }
}

// Every tie k + 1/2 at scales that are not powers of two but keep (k + 1/2) * scale and the
// quotient exact: each quotient is a tie, which must go to the even neighbour (127.5 -> 127 after
// saturation).
TEST(Quantize, RoundsHalfToEvenAtOtherScales) {
  Worker worker;
  for (const float scale : {3.0f, 0.75f, 40.0f, 1.25f}) {
    Floats x;
    for (int k = -128; k <= 127; ++k) x.push_back((static_cast<float>(k) + 0.5f) * scale);
    ASSERT_TRUE(quantizes_correctly(worker, x, scale, 5)) << "ties at scale " << scale;
  }
}

// Values far beyond 127 steps: each becomes +-127, never wraps, never -128; a denormal scale makes
// most quotients overflow to infinity.
TEST(Quantize, SaturatesFarBeyondTheScale) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const Floats extremes = {1e6f, -1e6f, 3e9f,   -3e9f,   1e38f,  -1e38f,  kFloatMax, -kFloatMax,
                           kInf, -kInf, 128.5f, -128.5f, 129.0f, -255.0f, 256.0f};
  ASSERT_TRUE(quantizes_correctly(worker, extremes, 1.0f)) << "scale 1";
  const Floats wide = values(workbook::uniform(5003, rng, -1e5, 1e5));
  for (const float scale : {0.5f, 1e-3f, 1e-30f, 1e-42f})
    ASSERT_TRUE(quantizes_correctly(worker, wide, scale, 9))
        << "5003 values in +-1e5, scale " << scale;
}

TEST(Quantize, LeavesInputUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const Floats x = values(workbook::adversarial(2053, rng, workbook::Specials::finite));
  const float scale = 1e-3f;
  Region<float> xr = worker.alloc<float>(x.size(), 1);
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(x.size(), 2);
  put(xr, x);
  ASSERT_CALL(quantize(worker, xr, scale, qr));
  EXPECT_TRUE(unchanged(x, xr, "quantize", "x"));
  EXPECT_CORRECT(lab04::oracle::check_quantize(x, scale, qr.copy()));
}

TEST(Quantize, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Region<float> xr = worker.alloc<float>(777);
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(777);
  for (int round = 0; round < 3; ++round) {
    const Floats x = values(workbook::normal(777, rng));
    const float scale = lab04::oracle::symmetric_scale(x);
    put(xr, x);
    ASSERT_CALL(quantize(worker, xr, scale, qr));
    ASSERT_CORRECT(lab04::oracle::check_quantize(x, scale, qr.copy()))
        << "call " << round + 1 << " " << kFresh;
  }
}

TEST(Quantize, RejectsNaN) {
  Worker worker;
  for (std::size_t at : {0, 64, 99}) {
    Floats x(100, 0.25f);
    x[at] = kNaN;
    worker.reset();
    Region<float> xr = worker.alloc<float>(x.size());
    Region<std::int8_t> qr = worker.alloc<std::int8_t>(x.size());
    put(xr, x);
    EXPECT_TRUE(rejected(quantize(worker, xr, 0.5f, qr),
                         "quantize of 100 values with NaN at index " + std::to_string(at)));
  }
}

TEST(Quantize, RejectsInvalidScale) {
  Worker worker;
  Region<float> xr = worker.alloc<float>(8);
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(8);
  put(xr, Floats(8, 1.0f));
  for (const float scale : {0.0f, -1.0f})
    EXPECT_TRUE(
        rejected(quantize(worker, xr, scale, qr), "quantize with scale " + std::to_string(scale)));
}

// --- dequantize
// -----------------------------------------------------------------------------------

Reply dequantize(Worker& worker, Region<std::int8_t>& q, float scale, Region<float>& x) {
  return worker.call("dequantize", {input(q, "q"), scale, output(x, "x")});
}

TEST(Dequantize, MatchesOracle) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (std::size_t n : sizes()) {
    worker.reset();
    const Bytes q = int8s(n, rng);
    const float scale = static_cast<float>(std::exp(rng.uniform(-20, 20)));
    Region<std::int8_t> qr = worker.alloc<std::int8_t>(n, n % 64);
    Region<float> xr = worker.alloc<float>(n, n * 3 % 16);
    put(qr, q);
    ASSERT_CALL(dequantize(worker, qr, scale, xr)) << "n = " << n;
    ASSERT_CORRECT(lab04::oracle::check_dequantize(q, scale, xr.copy()))
        << "n = " << n << ", scale " << scale;
  }
}

// Every value of the range, at scales from tiny to huge (the products stay normal floats).
TEST(Dequantize, EveryValueAtExtremeScales) {
  Worker worker;
  Bytes q;
  for (int v = -127; v <= 127; ++v) q.push_back(static_cast<std::int8_t>(v));
  for (const float scale : {1e-30f, 0.1f, 3.0f, 1e30f, kFloatMax / 128}) {
    worker.reset();
    Region<std::int8_t> qr = worker.alloc<std::int8_t>(q.size(), 11);
    Region<float> xr = worker.alloc<float>(q.size(), 5);
    put(qr, q);
    ASSERT_CALL(dequantize(worker, qr, scale, xr)) << "scale " << scale;
    ASSERT_CORRECT(lab04::oracle::check_dequantize(q, scale, xr.copy())) << "scale " << scale;
  }
}

TEST(Dequantize, LeavesInputUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const Bytes q = int8s(3001, rng);
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(q.size(), 3);
  Region<float> xr = worker.alloc<float>(q.size(), 1);
  put(qr, q);
  ASSERT_CALL(dequantize(worker, qr, 0.0625f, xr));
  EXPECT_TRUE(unchanged(q, qr, "dequantize", "q"));
  EXPECT_CORRECT(lab04::oracle::check_dequantize(q, 0.0625f, xr.copy()));
}

TEST(Dequantize, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(555);
  Region<float> xr = worker.alloc<float>(555);
  for (int round = 0; round < 3; ++round) {
    const Bytes q = int8s(555, rng);
    const float scale = 0.01f * static_cast<float>(round + 1);
    put(qr, q);
    ASSERT_CALL(dequantize(worker, qr, scale, xr));
    ASSERT_CORRECT(lab04::oracle::check_dequantize(q, scale, xr.copy()))
        << "call " << round + 1 << " " << kFresh;
  }
}

TEST(Dequantize, RejectsInvalidScale) {
  Worker worker;
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(8);
  Region<float> xr = worker.alloc<float>(8);
  put(qr, Bytes(8, 1));
  for (const float scale : {0.0f, -2.0f})
    EXPECT_TRUE(rejected(dequantize(worker, qr, scale, xr),
                         "dequantize with scale " + std::to_string(scale)));
}

// --- quantize_rows
// --------------------------------------------------------------------------------

struct Rows {
  Floats x;
  std::size_t rows, cols;
  Region<float> xr, scales;
  Region<std::int8_t> q;
};

Rows rows_of(Worker& worker, std::size_t rows, std::size_t cols, workbook::Rng& rng) {
  Rows r{values(workbook::normal(rows * cols, rng)), rows, cols, {}, {}, {}};
  for (std::size_t i = 0; i < rows; ++i)  // rows of very different magnitudes, one all zero
    for (std::size_t j = 0; j < cols; ++j)
      r.x[i * cols + j] *= i % 4 == 3 ? 0.0f : std::pow(10.0f, static_cast<float>(i % 7) - 3);
  r.xr = worker.alloc<float>(r.x.size(), cols % 16);
  r.scales = worker.alloc<float>(rows, rows % 16);
  r.q = worker.alloc<std::int8_t>(r.x.size(), cols % 64);
  put(r.xr, r.x);
  return r;
}

Reply quantize_rows(Worker& worker, Rows& r) {
  return worker.call("quantize_rows",
                     {input(r.xr, "x"), r.cols, output(r.scales, "scales"), output(r.q, "q")});
}

// Every row's scale, then every value, against the oracle.
::testing::AssertionResult rows_correct(const Rows& r) {
  const workbook::GuardedBuffer<float> scales = r.scales.copy();
  const std::span<const float> x(r.x);
  for (std::size_t i = 0; i < r.rows; ++i) {
    auto result = workbook::testing::correct(lab04::oracle::check_symmetric_scale(
        x.subspan(i * r.cols, r.cols), scales[i], "quantize_rows"));
    if (!result)
      return result << "\n  the scale of row " << i << " of " << r.rows << " x " << r.cols;
  }
  return workbook::testing::correct(lab04::oracle::check_quantize(
             x, std::span<const float>(scales.data(), r.rows), r.cols, r.q.copy(), "quantize_rows"))
         << "\n  " << r.rows << " x " << r.cols;
}

TEST(QuantizeRows, MatchesOracle) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (auto [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1, 517}, {517, 1}, {2, 2}, {9, 63}, {7, 129}, {33, 65}, {3, 4097}, {0, 7}}) {
    worker.reset();
    Rows r = rows_of(worker, rows, cols, rng);
    ASSERT_CALL(quantize_rows(worker, r)) << rows << " x " << cols;
    ASSERT_TRUE(rows_correct(r));
  }
}

TEST(QuantizeRows, LeavesInputUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Rows r = rows_of(worker, 21, 101, rng);
  ASSERT_CALL(quantize_rows(worker, r));
  EXPECT_TRUE(unchanged(r.x, r.xr, "quantize_rows", "x"));
  EXPECT_TRUE(rows_correct(r));
}

TEST(QuantizeRows, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Rows r = rows_of(worker, 12, 75, rng);
  for (int round = 0; round < 3; ++round) {
    r.x = values(workbook::normal(r.x.size(), rng, 0.0, round + 1.0));
    put(r.xr, r.x);
    ASSERT_CALL(quantize_rows(worker, r));
    ASSERT_TRUE(rows_correct(r)) << "call " << round + 1 << " " << kFresh;
  }
}

TEST(QuantizeRows, RejectsNaN) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Rows r = rows_of(worker, 5, 67, rng);
  r.x[3 * 67 + 66] = kNaN;  // the last element of row 3
  put(r.xr, r.x);
  EXPECT_TRUE(rejected(quantize_rows(worker, r),
                       "quantize_rows of 5 x 67 with NaN in the last element of row 3"));
}

TEST(QuantizeRows, RejectsMismatchedShapes) {
  Worker worker;
  Region<float> x = worker.alloc<float>(12), scales = worker.alloc<float>(3);
  Region<std::int8_t> q = worker.alloc<std::int8_t>(12);
  put(x, Floats(12, 1.0f));
  EXPECT_TRUE(rejected(
      worker.call("quantize_rows", {input(x, "x"), 5, output(scales, "scales"), output(q, "q")}),
      "quantize_rows of 12 values in rows of 5"));
}

// --- quantized_relu
// -------------------------------------------------------------------------------

Reply relu(Worker& worker, Region<std::int8_t>& q, Region<std::int8_t>& out) {
  return worker.call("quantized_relu", {input(q, "q"), output(out, "out")});
}

TEST(QuantizedRelu, MatchesOracle) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (std::size_t n : sizes()) {
    worker.reset();
    const Bytes q = int8s(n, rng);
    Region<std::int8_t> qr = worker.alloc<std::int8_t>(n, n * 5 % 64),
                        out = worker.alloc<std::int8_t>(n, n % 64);
    put(qr, q);
    ASSERT_CALL(relu(worker, qr, out)) << "n = " << n;
    ASSERT_CORRECT(lab04::oracle::check_quantized_relu(q, out.copy())) << "n = " << n;
  }
}

TEST(QuantizedRelu, InPlace) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const Bytes q = int8s(1999, rng);
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(q.size(), 17);
  put(qr, q);
  ASSERT_CALL(
      worker.call("quantized_relu", {input(qr, "q"), input(qr, "out (the same buffer as q)")}));
  EXPECT_CORRECT(lab04::oracle::check_quantized_relu(q, qr.copy()));
}

TEST(QuantizedRelu, LeavesInputUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const Bytes q = int8s(2053, rng);
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(q.size(), 1),
                      out = worker.alloc<std::int8_t>(q.size(), 2);
  put(qr, q);
  ASSERT_CALL(relu(worker, qr, out));
  EXPECT_TRUE(unchanged(q, qr, "quantized_relu", "q"));
  EXPECT_CORRECT(lab04::oracle::check_quantized_relu(q, out.copy()));
}

TEST(QuantizedRelu, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Region<std::int8_t> qr = worker.alloc<std::int8_t>(1000), out = worker.alloc<std::int8_t>(1000);
  for (int round = 0; round < 3; ++round) {
    const Bytes q = int8s(1000, rng);
    put(qr, q);
    ASSERT_CALL(relu(worker, qr, out));
    ASSERT_CORRECT(lab04::oracle::check_quantized_relu(q, out.copy()))
        << "call " << round + 1 << " " << kFresh;
  }
}

TEST(QuantizedRelu, RejectsMismatchedSizes) {
  Worker worker;
  Region<std::int8_t> q = worker.alloc<std::int8_t>(10), out = worker.alloc<std::int8_t>(9);
  EXPECT_TRUE(rejected(relu(worker, q, out), "quantized_relu(q of 10, out of 9)"));
}

// --- matmul_int8
// ----------------------------------------------------------------------------------

struct Product {
  Bytes a, b;
  std::size_t m, n, depth;
  Region<std::int8_t> ar, br;
  Region<std::int32_t> cr;
};

Product product_of(Worker& worker, std::size_t m, std::size_t n, std::size_t depth,
                   workbook::Rng& rng, std::size_t misalign = 0) {
  Product p{int8s(m * depth, rng), int8s(n * depth, rng), m, n, depth, {}, {}, {}};
  p.ar = worker.alloc<std::int8_t>(p.a.size(), misalign % 64);
  p.br = worker.alloc<std::int8_t>(p.b.size(), misalign * 3 % 64);
  p.cr = worker.alloc<std::int32_t>(m * n, misalign % 16);
  put(p.ar, p.a);
  put(p.br, p.b);
  return p;
}

Reply multiply(Worker& worker, Product& p) {
  return worker.call("matmul_int8",
                     {input(p.ar, "a"), input(p.br, "b"), output(p.cr, "c"), p.m, p.n, p.depth});
}

workbook::CheckResult check(const Product& p) {
  return lab04::oracle::check_matmul_int8(p.a, p.b,
                                          lab04::oracle::product(p.a, p.b, p.m, p.n, p.depth),
                                          p.cr.copy(), p.m, p.n, p.depth);
}

std::string describe(const Product& p) {
  return "m = " + std::to_string(p.m) + ", n = " + std::to_string(p.n) +
         ", depth = " + std::to_string(p.depth);
}

TEST(MatmulInt8, MatchesOracle) {
  auto rng = workbook::testing::rng();
  Worker worker;
  std::size_t misalign = 0;
  for (auto [m, n, depth] :
       std::vector<std::tuple<std::size_t, std::size_t, std::size_t>>{{1, 97, 131},
                                                                      {97, 1, 131},
                                                                      {1, 1, 333},
                                                                      {11, 19, 129},
                                                                      {6, 64, 67},
                                                                      {13, 65, 255},
                                                                      {7, 130, 1},
                                                                      {130, 7, 2},
                                                                      {70, 50, 517},
                                                                      {3, 4, 0},
                                                                      {0, 5, 9},
                                                                      {25, 31, 4099}}) {
    worker.reset();
    Product p = product_of(worker, m, n, depth, rng, misalign++);
    ASSERT_CALL(multiply(worker, p)) << describe(p);
    ASSERT_CORRECT(check(p)) << describe(p);
  }
}

// Only -127 and 127: every product is +-16129, the sums as large as the depth allows.
TEST(MatmulInt8, ExtremeValues) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Product p = product_of(worker, 9, 23, 2047, rng, 5);
  for (auto* v : {&p.a, &p.b})
    for (std::int8_t& e : *v) e = e >= 0 ? 127 : -127;
  put(p.ar, p.a);
  put(p.br, p.b);
  ASSERT_CALL(multiply(worker, p)) << describe(p);
  EXPECT_CORRECT(check(p)) << describe(p);
}

TEST(MatmulInt8, LeavesInputsUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Product p = product_of(worker, 17, 33, 200, rng, 1);
  ASSERT_CALL(multiply(worker, p));
  EXPECT_TRUE(unchanged(p.a, p.ar, "matmul_int8", "a"));
  EXPECT_TRUE(unchanged(p.b, p.br, "matmul_int8", "b"));
  EXPECT_CORRECT(check(p));
}

TEST(MatmulInt8, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Product p = product_of(worker, 14, 29, 150, rng);
  for (int round = 0; round < 3; ++round) {
    p.a = int8s(p.a.size(), rng);
    p.b = int8s(p.b.size(), rng);
    put(p.ar, p.a);
    put(p.br, p.b);
    ASSERT_CALL(multiply(worker, p));
    ASSERT_CORRECT(check(p)) << "call " << round + 1 << " " << kFresh;
  }
}

TEST(MatmulInt8, RejectsMinus128) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Product p = product_of(worker, 3, 5, 70, rng);
  p.a[2 * 70 + 69] = -128;  // the last element of a
  put(p.ar, p.a);
  EXPECT_TRUE(rejected(multiply(worker, p), "matmul_int8 with a[209] = -128"));
}

// --- quantized_matmul
// -----------------------------------------------------------------------------

struct Quantized {
  Bytes values;
  Floats scales;
  std::size_t rows, cols;
  Region<std::int8_t> vr;
  Region<float> sr;
  lab04::QuantizedMatrix view() const { return {values, scales, rows, cols}; }
};

Quantized quantized(Worker& worker, std::size_t rows, std::size_t cols, bool per_row,
                    workbook::Rng& rng) {
  Quantized q{int8s(rows * cols, rng), Floats(per_row ? rows : 1), rows, cols, {}, {}};
  for (float& s : q.scales) s = static_cast<float>(std::exp(rng.uniform(-8, 4)));
  q.vr = worker.alloc<std::int8_t>(q.values.size(), cols % 64);
  q.sr = worker.alloc<float>(q.scales.size(), rows % 16);
  put(q.vr, q.values);
  put(q.sr, q.scales);
  return q;
}

Reply quantized_matmul(Worker& worker, Quantized& a, Quantized& b, Region<float>& c) {
  return worker.call("quantized_matmul", {input(a.vr, "a.values"), input(a.sr, "a.scales"), a.rows,
                                          a.cols, input(b.vr, "b.values"), input(b.sr, "b.scales"),
                                          b.rows, b.cols, output(c, "c")});
}

workbook::CheckResult check(const Quantized& a, const Quantized& b, const Region<float>& c) {
  return lab04::oracle::check_quantized_matmul(
      a.view(), b.view(), lab04::oracle::product(a.values, b.values, a.rows, b.rows, a.cols),
      c.copy());
}

TEST(QuantizedMatmul, MatchesOracle) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (auto [m, n, depth] : std::vector<std::tuple<std::size_t, std::size_t, std::size_t>>{
           {1, 77, 65}, {77, 1, 65}, {13, 29, 131}, {6, 65, 3}, {40, 40, 0}})
    for (const bool per_row_a : {false, true})
      for (const bool per_row_b : {false, true}) {
        worker.reset();
        Quantized a = quantized(worker, m, depth, per_row_a, rng),
                  b = quantized(worker, n, depth, per_row_b, rng);
        Region<float> c = worker.alloc<float>(m * n, 7);
        ASSERT_CALL(quantized_matmul(worker, a, b, c)) << m << " x " << n << " x " << depth;
        ASSERT_CORRECT(check(a, b, c))
            << m << " x " << n << " x " << depth << ", A " << (per_row_a ? "per row" : "per tensor")
            << ", B " << (per_row_b ? "per row" : "per tensor");
      }
}

TEST(QuantizedMatmul, LeavesInputsUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Quantized a = quantized(worker, 19, 90, true, rng), b = quantized(worker, 23, 90, true, rng);
  Region<float> c = worker.alloc<float>(19 * 23, 1);
  ASSERT_CALL(quantized_matmul(worker, a, b, c));
  EXPECT_TRUE(unchanged(a.values, a.vr, "quantized_matmul", "a.values"));
  EXPECT_TRUE(unchanged(a.scales, a.sr, "quantized_matmul", "a.scales"));
  EXPECT_TRUE(unchanged(b.values, b.vr, "quantized_matmul", "b.values"));
  EXPECT_TRUE(unchanged(b.scales, b.sr, "quantized_matmul", "b.scales"));
  EXPECT_CORRECT(check(a, b, c));
}

TEST(QuantizedMatmul, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Quantized a = quantized(worker, 15, 70, true, rng), b = quantized(worker, 26, 70, false, rng);
  Region<float> c = worker.alloc<float>(15 * 26);
  for (int round = 0; round < 3; ++round) {
    for (Quantized* q : {&a, &b}) {
      q->values = int8s(q->values.size(), rng);
      for (float& s : q->scales) s = static_cast<float>(std::exp(rng.uniform(-8, 4)));
      put(q->vr, q->values);
      put(q->sr, q->scales);
    }
    ASSERT_CALL(quantized_matmul(worker, a, b, c));
    ASSERT_CORRECT(check(a, b, c)) << "call " << round + 1 << " " << kFresh;
  }
}

TEST(QuantizedMatmul, RejectsMismatchedScales) {
  auto rng = workbook::testing::rng();
  Worker worker;
  Quantized a = quantized(worker, 2, 3, true, rng), b = quantized(worker, 4, 3, false, rng);
  Region<float> three = worker.alloc<float>(3), c = worker.alloc<float>(8);
  put(three, Floats(3, 1.0f));
  EXPECT_TRUE(rejected(
      worker.call("quantized_matmul", {input(a.vr, "a.values"), input(three, "a.scales"), a.rows,
                                       a.cols, input(b.vr, "b.values"), input(b.sr, "b.scales"),
                                       b.rows, b.cols, output(c, "c")}),
      "quantized_matmul with 3 scales for the 2 rows of a"));
}

}  // namespace
