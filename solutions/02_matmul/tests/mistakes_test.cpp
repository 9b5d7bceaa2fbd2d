// Lab 02's catalogue of mistakes (labs/02_matmul/tests/matmul_mistakes.hpp), entry by entry: the
// wrong C each mistake gives, computed in float32 as the buggy code computes it, must be named by
// the oracle's check as that mistake, and the right C must pass.
#include "matmul_oracle.hpp"

#include <workbook/testing.hpp>

#include <functional>
#include <string>
#include <vector>

namespace {

using lab02::MatmulShape;

// A term of a sum: the float32 product the buggy code adds for element (i, j) at step p.
using Term = std::function<float(std::size_t i, std::size_t j, std::size_t p)>;

struct Case {
  MatmulShape shape;
  std::vector<float> a, b;
  lab02::oracle::Product want;
  workbook::GuardedBuffer<float> c;

  explicit Case(const MatmulShape& s) : shape(s), c(lab02::oracle::output_for(s)) {
    auto rng = workbook::testing::rng();
    a = lab02::oracle::random_matrix(s.m, s.k, s.lda, rng);
    b = lab02::oracle::random_matrix(s.k, s.n, s.ldb, rng);
    want = lab02::oracle::multiply(a, b, s);
  }
  float a_at(std::size_t at) const { return a[at]; }
  float b_at(std::size_t at) const { return b[at]; }
  // C(i, j) = the float32 sum of term(i, j, p) for p in [first, last), as a student's loop adds.
  void store_sums(std::size_t first, std::size_t last, const Term& term) {
    for (std::size_t i = 0; i < shape.m; ++i)
      for (std::size_t j = 0; j < shape.n; ++j) {
        float sum = 0;
        for (std::size_t p = first; p < last; ++p) sum += term(i, j, p);
        c[i * shape.ldc + j] = sum;
      }
  }
  Term right() const {
    return [this](std::size_t i, std::size_t j, std::size_t p) {
      return a[i * shape.lda + p] * b[p * shape.ldb + j];
    };
  }
  workbook::CheckResult check(std::span<const float> before = {}) const {
    return lab02::oracle::check(want, c, shape, before);
  }
};

TEST(MatmulMistakes, RightProductPasses) {
  Case t({.m = 13, .n = 11, .k = 37, .lda = 40, .ldb = 12, .ldc = 15});
  t.store_sums(0, t.shape.k, t.right());
  EXPECT_CORRECT(t.check());
}

TEST(MatmulMistakes, CLeftAsItWas) {
  Case t(MatmulShape::packed(5, 7, 0));
  for (std::size_t i = 0; i < t.c.size(); ++i) t.c[i] = 42.0f;
  const std::vector<float> before(t.c.span().begin(), t.c.span().end());
  EXPECT_EQ(t.check(before).mistake, "C as it was before the call");
}

TEST(MatmulMistakes, AddedToC) {
  Case t(MatmulShape::packed(20, 30, 40));
  lab02::oracle::fill_stale(t.c, t.shape);
  const std::vector<float> before(t.c.span().begin(), t.c.span().end());
  for (std::size_t i = 0; i < t.shape.m; ++i)
    for (std::size_t p = 0; p < t.shape.k; ++p)
      for (std::size_t j = 0; j < t.shape.n; ++j) t.c[i * t.shape.ldc + j] += t.right()(i, j, p);
  EXPECT_EQ(t.check(before).mistake, "C's earlier contents plus A * B (C += A * B)");
}

TEST(MatmulMistakes, LastProductOnly) {
  Case t(MatmulShape::packed(7, 5, 6));
  t.store_sums(t.shape.k - 1, t.shape.k, t.right());
  EXPECT_EQ(t.check().mistake, "only the last product of each sum, a[i][k-1] * b[k-1][j]");
}

TEST(MatmulMistakes, BTransposed) {
  Case t(MatmulShape::packed(9, 9, 9));
  t.store_sums(0, 9, [&](std::size_t i, std::size_t j, std::size_t p) {
    return t.a_at(i * 9 + p) * t.b_at(j * 9 + p);
  });
  EXPECT_EQ(t.check().mistake, "A * B with B read as if it were transposed (b[j * ldb + p])");
}

TEST(MatmulMistakes, ATransposed) {
  Case t(MatmulShape::packed(9, 9, 9));
  t.store_sums(0, 9, [&](std::size_t i, std::size_t j, std::size_t p) {
    return t.a_at(p * 9 + i) * t.b_at(p * 9 + j);
  });
  EXPECT_EQ(t.check().mistake, "A * B with A read as if it were transposed (a[p * lda + i])");
}

TEST(MatmulMistakes, CTransposed) {
  Case t(MatmulShape::packed(9, 9, 9));
  t.store_sums(0, 9, [&](std::size_t i, std::size_t j, std::size_t p) {
    return t.a_at(j * 9 + p) * t.b_at(p * 9 + i);  // C(j, i), stored at (i, j)
  });
  EXPECT_EQ(t.check().mistake, "A * B stored transposed (element (i, j) at c[j * ldc + i])");
}

TEST(MatmulMistakes, RowsOfAReadKApart) {
  Case t({.m = 5, .n = 7, .k = 3, .lda = 4, .ldb = 9, .ldc = 8});
  t.store_sums(0, 3, [&](std::size_t i, std::size_t j, std::size_t p) {
    return t.a_at(i * 3 + p) * t.b_at(p * 9 + j);
  });
  EXPECT_EQ(t.check().mistake, "A * B with the rows of A read k apart instead of lda");
}

TEST(MatmulMistakes, RowsOfBReadNApart) {
  Case t({.m = 5, .n = 7, .k = 3, .lda = 4, .ldb = 9, .ldc = 8});
  t.store_sums(0, 3, [&](std::size_t i, std::size_t j, std::size_t p) {
    return t.a_at(i * 4 + p) * t.b_at(p * 7 + j);
  });
  EXPECT_EQ(t.check().mistake, "A * B with the rows of B read n apart instead of ldb");
}

TEST(MatmulMistakes, LoopOverPToN) {
  Case t(MatmulShape::packed(7, 13, 17));
  t.store_sums(0, 13, t.right());
  EXPECT_EQ(t.check().mistake, "A * B with the loop over p running to n instead of k");
}

TEST(MatmulMistakes, LastPartialBlockOfKSkipped) {
  Case t(MatmulShape::packed(6, 5, 70));
  t.store_sums(0, 64, t.right());  // blocks of 64 (or 8, 16, 32: the same cut)
  EXPECT_EQ(t.check().mistake,
            "each sum stopped at p = 64, the end of the last full block of k = 70");
}

TEST(MatmulMistakes, OnlyTheLastBlockOfK) {
  Case t(MatmulShape::packed(6, 5, 70));
  t.store_sums(64, 70, t.right());
  EXPECT_EQ(t.check().mistake, "only the products from p = 64 to k = 70, the last block of k");
}

TEST(MatmulMistakes, NoFullBlockOfK) {
  Case t(MatmulShape::packed(4, 4, 17));
  t.store_sums(0, 0, t.right());
  EXPECT_EQ(t.check().mistake, "zero in every element of C (k = 17, less than one block of k)");
}

// A C of zeros is no "last product" and no block of k, whatever k: at k = 20000 the right answer's
// bound is wider than one product, so only the wrong answer's own rounding may decide.
TEST(MatmulMistakes, ZerosMatchNoSumOfProducts) {
  Case t(MatmulShape::packed(4, 5, 20000));
  t.store_sums(0, 0, t.right());
  const workbook::CheckResult r = t.check();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mistake, "") << r;
}

// Blocks of k that each re-zero C: C holds the last block's products, not the last product.
TEST(MatmulMistakes, LastBlockOfKIsNotTheLastProduct) {
  Case t(MatmulShape::packed(6, 5, 5000));
  t.store_sums(4992, 5000, t.right());  // blocks of 128 (or 64, 32, ...: the same start)
  EXPECT_EQ(t.check().mistake, "only the products from p = 4992 to k = 5000, the last block of k");
}

TEST(MatmulMistakes, OnlyTheFirstBlockOfK) {
  Case t(MatmulShape::packed(6, 5, 613));
  t.store_sums(0, 256, t.right());
  EXPECT_EQ(t.check().mistake,
            "only the products from p = 0 to 255, the first block of k (k = 613)");
}

TEST(MatmulMistakes, OnlyTheLastFullBlockOfK) {
  Case t(MatmulShape::packed(6, 5, 613));
  t.store_sums(256, 512, t.right());
  EXPECT_EQ(t.check().mistake,
            "only the products from p = 256 to 511, the last full block of k (blocks of 256, k = "
            "613)");
}

TEST(MatmulMistakes, RowsOfBReadLdcApart) {
  Case t({.m = 5, .n = 7, .k = 3, .lda = 4, .ldb = 9, .ldc = 8});
  t.store_sums(0, 3, [&](std::size_t i, std::size_t j, std::size_t p) {
    return t.a_at(i * 4 + p) * t.b_at(p * 8 + j);
  });
  EXPECT_EQ(t.check().mistake, "A * B with the rows of B read ldc apart instead of ldb");
}

TEST(MatmulMistakes, RunningSums) {
  Case t(MatmulShape::packed(6, 7, 9));
  float row = 0, all = 0;
  Case u(MatmulShape::packed(6, 7, 9));
  for (std::size_t i = 0; i < 6; ++i, row = 0)
    for (std::size_t j = 0; j < 7; ++j)
      for (std::size_t p = 0; p <= 9; ++p) {
        if (p == 9) {
          t.c[i * 7 + j] = row;
          u.c[i * 7 + j] = all;
          break;
        }
        row += t.right()(i, j, p);
        all += u.right()(i, j, p);
      }
  EXPECT_EQ(t.check().mistake, "each element plus the ones before it in its row (a running sum)");
  EXPECT_EQ(u.check().mistake,
            "each element plus every one before it in C (a running sum over the matrix)");
}

// A tile at the right edge stored with whole batches of 16: the padding after column n - 1 is
// written up to the next multiple of 16, and the note says so.
TEST(MatmulMistakes, EdgeTileStoredWithWholeBatches) {
  Case t({.m = 3, .n = 13, .k = 4, .lda = 4, .ldb = 13, .ldc = 20});
  t.store_sums(0, 4, t.right());
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 13; j < 16; ++j) t.c[i * 20 + j] = 1.0f;
  const workbook::CheckResult r = t.check();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnosis.find("written 3 elements past its last column, up to column 15"),
            std::string::npos)
      << r;
}

// Register tiles: a tile's offset left out of A's or B's index, and accumulators carried from one
// tile to the next.
TEST(MatmulMistakes, TileOffsetsAndAccumulators) {
  const MatmulShape s = MatmulShape::packed(12, 32, 9);
  Case rows(s), cols(s), carried(s);
  rows.store_sums(
      0, 9, [&](std::size_t i, std::size_t j, std::size_t p) { return rows.right()(i % 4, j, p); });
  EXPECT_EQ(rows.check().mistake,
            "row i of C computed from row i % 4 of A (tiles of 4 rows that all read the first)");
  cols.store_sums(
      0, 9, [&](std::size_t i, std::size_t j, std::size_t p) { return cols.right()(i, j % 8, p); });
  EXPECT_EQ(cols.check().mistake,
            "column j of C computed from column j % 8 of B (tiles of 8 columns that all read the "
            "first)");
  for (std::size_t i = 0; i < 12; ++i) {
    float acc[8] = {};
    for (std::size_t j0 = 0; j0 < 32; j0 += 8)
      for (std::size_t c = 0; c < 8; ++c) {
        for (std::size_t p = 0; p < 9; ++p) acc[c] += carried.right()(i, j0 + c, p);
        carried.c[i * 32 + j0 + c] = acc[c];
      }
  }
  EXPECT_EQ(carried.check().mistake,
            "each tile of 8 columns plus the tiles before it in its row (accumulators not reset)");
}

}  // namespace
