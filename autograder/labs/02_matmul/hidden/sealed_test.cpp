// Lab 02 hidden tests, sealed: matmul runs in a worker process that holds the student's code; the
// inputs, the oracle and the verdict stay here. Beyond the visible tests, they check what a kernel
// could fake in its own process: shapes and strides the visible tests do not use, outputs against
// inputs the kernel cannot have modified (the checker keeps a private copy), no write outside C or
// into its padding (canaries around it in shared memory, poison between its rows), and no result
// kept from one call to the next (the same buffers, new values).
#include "matmul_oracle.hpp"

#include <grade/sealed.hpp>

#include <workbook/testing.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace {

using lab02::MatmulShape;
using lab02::oracle::describe;
using lab02::oracle::elements;
using lab02::oracle::random_matrix;
using workbook::sealed::input;
using workbook::sealed::output;
using workbook::sealed::Region;
using workbook::sealed::Worker;

MatmulShape packed(std::size_t m, std::size_t n, std::size_t k) {
  return MatmulShape::packed(m, n, k);
}

void put(Region<float>& r, const std::vector<float>& v) {
  std::copy(v.begin(), v.end(), r.data());
}

// The regions of one product, A and B filled (NaN in their padding), C poisoned (its padding too).
struct Operands {
  std::vector<float> a, b;  // the checker's private copies
  Region<float> ar, br, cr;
};

Operands operands(Worker& worker, const MatmulShape& s, workbook::Rng& rng,
                  std::size_t misalign = 0) {
  Operands o{random_matrix(s.m, s.k, s.lda, rng), random_matrix(s.k, s.n, s.ldb, rng), {}, {}, {}};
  o.ar = worker.alloc<float>(o.a.size(), misalign % 16);
  o.br = worker.alloc<float>(o.b.size(), misalign * 3 % 16);
  o.cr = worker.alloc<float>(elements(s.m, s.n, s.ldc), misalign * 5 % 16);
  put(o.ar, o.a);
  put(o.br, o.b);
  return o;
}

workbook::sealed::Reply call(Worker& worker, Operands& o, const MatmulShape& s) {
  return worker.call("matmul", {input(o.ar, "A"), input(o.br, "B"), output(o.cr, "C"), s.m, s.n,
                                s.k, s.lda, s.ldb, s.ldc});
}

// Multiplies in the worker and checks C, its padding included, against the oracle.
::testing::AssertionResult multiplies_correctly(Worker& worker, const MatmulShape& s,
                                                workbook::Rng& rng, std::size_t misalign = 0) {
  worker.reset();
  Operands o = operands(worker, s, rng, misalign);
  const auto reply = call(worker, o, s);
  if (!reply.ok)
    return ::testing::AssertionFailure() << reply.message << "\n  with " << describe(s);
  return workbook::testing::correct(
             lab02::oracle::check(lab02::oracle::multiply(o.a, o.b, s), o.cr.copy(), s))
         << "\n  with " << describe(s);
}

void expect_all_correct(const std::vector<MatmulShape>& shapes) {
  auto rng = workbook::testing::rng();
  Worker worker;
  std::size_t misalign = 0;
  for (const MatmulShape& s : shapes) ASSERT_TRUE(multiplies_correctly(worker, s, rng, misalign++));
}

// An input the kernel must leave as it was (it takes it as a const span), padding included.
::testing::AssertionResult unchanged(const std::vector<float>& before, const Region<float>& after,
                                     const char* name) {
  return workbook::testing::correct(
      workbook::check_unchanged(before, after.span(), lab02::oracle::where(), name));
}

// --- Shapes the visible tests do not use
// ----------------------------------------------------------

// Odd sizes next to no usual block size, and sizes one past a register tile in one dimension only.
TEST(Matmul, OddShapesMatchOracle) {
  expect_all_correct({packed(19, 23, 29), packed(11, 47, 97), packed(29, 129, 63),
                      packed(67, 257, 191), packed(197, 95, 313), packed(7, 1025, 33),
                      packed(25, 49, 2), packed(13, 17, 1000), packed(43, 11, 257)});
}

// Row and column vectors: one row of C (1 x N), one column (N x 1), a dot product (1 x 1).
TEST(Matmul, RowsAndColumnsMatchOracle) {
  expect_all_correct({packed(1, 517, 77), packed(517, 1, 77), packed(1, 1, 1031), packed(1, 33, 1),
                      packed(33, 1, 1), packed(1, 1, 1), packed(2, 1, 300), packed(1, 2, 300)});
}

// Leading dimensions the visible tests do not use: padding of a few elements, of whole SIMD
// registers, and far wider than the row; C's padding (poison) must survive, A's and B's (NaN) must
// not be read.
TEST(Matmul, LeadingDimensionsMatchOracle) {
  expect_all_correct({{.m = 37, .n = 41, .k = 43, .lda = 50, .ldb = 64, .ldc = 45},
                      {.m = 1, .n = 100, .k = 5, .lda = 7, .ldb = 101, .ldc = 300},
                      {.m = 97, .n = 3, .k = 255, .lda = 256, .ldb = 5, .ldc = 17},
                      {.m = 130, .n = 70, .k = 90, .lda = 91, .ldb = 128, .ldc = 71},
                      {.m = 9, .n = 1, .k = 1, .lda = 3, .ldb = 2, .ldc = 16},
                      {.m = 66, .n = 33, .k = 17, .lda = 17, .ldb = 33, .ldc = 48}});
}

// k = 0 writes zeros over whatever C held; m = 0 or n = 0 writes nothing (the canaries see it).
TEST(Matmul, EmptySumsAndEmptyProducts) {
  expect_all_correct({packed(3, 19, 0),
                      {.m = 4, .n = 5, .k = 0, .lda = 0, .ldb = 5, .ldc = 9},
                      packed(0, 7, 5),
                      packed(6, 0, 5),
                      packed(0, 0, 0)});
}

// --- What a kernel could fake in its own process ------------------------------------------------

TEST(Matmul, FreshResultsEachCall) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const MatmulShape s{.m = 45, .n = 67, .k = 39, .lda = 41, .ldb = 67, .ldc = 70};
  Operands o = operands(worker, s, rng, 3);
  for (int round = 0; round < 3; ++round) {
    o.a = random_matrix(s.m, s.k, s.lda, rng);
    o.b = random_matrix(s.k, s.n, s.ldb, rng);
    put(o.ar, o.a);
    put(o.br, o.b);
    ASSERT_CALL(call(worker, o, s)) << describe(s);
    ASSERT_CORRECT(lab02::oracle::check(lab02::oracle::multiply(o.a, o.b, s), o.cr.copy(), s))
        << "call " << round + 1
        << " on the same buffers with new values: a result kept from an earlier call? With "
        << describe(s);
  }
}

TEST(Matmul, LeavesInputsUnchanged) {
  auto rng = workbook::testing::rng();
  Worker worker;
  for (const MatmulShape& s :
       {packed(61, 53, 47),
        MatmulShape{.m = 20, .n = 30, .k = 40, .lda = 45, .ldb = 35, .ldc = 30}}) {
    worker.reset();
    Operands o = operands(worker, s, rng, 1);
    ASSERT_CALL(call(worker, o, s)) << describe(s);
    EXPECT_TRUE(unchanged(o.a, o.ar, "A")) << describe(s);
    EXPECT_TRUE(unchanged(o.b, o.br, "B")) << describe(s);
    EXPECT_CORRECT(lab02::oracle::check(lab02::oracle::multiply(o.a, o.b, s), o.cr.copy(), s))
        << describe(s);
  }
}

// A and B may be the same buffer (both are only read): C = A * A.
TEST(Matmul, MultipliesABufferByItself) {
  auto rng = workbook::testing::rng();
  Worker worker;
  const MatmulShape s{.m = 29, .n = 29, .k = 29, .lda = 32, .ldb = 32, .ldc = 29};
  const std::vector<float> a = random_matrix(s.m, s.k, s.lda, rng);
  Region<float> ar = worker.alloc<float>(a.size(), 2),
                cr = worker.alloc<float>(elements(s.m, s.n, s.ldc));
  put(ar, a);
  ASSERT_CALL(worker.call("matmul", {input(ar, "A"), input(ar, "B (the same buffer as A)"),
                                     output(cr, "C"), s.m, s.n, s.k, s.lda, s.ldb, s.ldc}));
  EXPECT_TRUE(unchanged(a, ar, "A"));
  EXPECT_CORRECT(lab02::oracle::check(lab02::oracle::multiply(a, a, s), cr.copy(), s))
      << "C = A * A";
}

// --- Argument checks ---------------------------------------------------------------------------

TEST(Matmul, RejectsBadArguments) {
  Worker worker;
  Region<float> a = worker.alloc<float>(100), b = worker.alloc<float>(100),
                c = worker.alloc<float>(100);
  const std::vector<std::pair<MatmulShape, const char*>> bad = {
      {{.m = 4, .n = 4, .k = 6, .lda = 5, .ldb = 4, .ldc = 4}, "lda < k"},
      {{.m = 4, .n = 6, .k = 4, .lda = 4, .ldb = 6, .ldc = 5}, "ldc < n"},
      {{.m = 9, .n = 12, .k = 4, .lda = 4, .ldb = 12, .ldc = 12}, "C needs 108 elements"}};
  for (const auto& [s, what] : bad) {
    const auto reply = worker.call("matmul", {input(a, "A"), input(b, "B"), output(c, "C"), s.m,
                                              s.n, s.k, s.lda, s.ldb, s.ldc});
    EXPECT_EQ(reply.kind, "invalid_argument")
        << "matmul with " << describe(s) << " (" << what
        << ") must throw std::invalid_argument; got: "
        << (reply.ok ? std::string("a normal return") : reply.message);
  }
  const MatmulShape s = packed(10, 10, 10);
  const auto reply =
      worker.call("matmul", {input(a, "A"), input(b, "B"), input(a, "C (the same buffer as A)"),
                             s.m, s.n, s.k, s.lda, s.ldb, s.ldc});
  EXPECT_EQ(reply.kind, "invalid_argument")
      << "matmul with C the same buffer as A must throw std::invalid_argument; got: "
      << (reply.ok ? std::string("a normal return") : reply.message);
}

}  // namespace
