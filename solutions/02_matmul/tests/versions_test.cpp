// Every numbered version of lab 02 is correct on the shapes that break blocked kernels: they differ
// only in speed.
#include "versions.hpp"
#include "matmul_oracle.hpp"

#include <workbook/testing.hpp>

#include <vector>

namespace {

using lab02::MatmulShape;
using Version = void (*)(std::span<const float>, std::span<const float>, std::span<float>,
                         const MatmulShape&);

// Primes, sizes next to the blocks (6-row tiles, 64-column tiles, blocks of 32, 128, 256 and 1024),
// k = 0 and 1, and padding between rows.
const std::vector<MatmulShape> kShapes = {
    MatmulShape::packed(1, 1, 1),
    MatmulShape::packed(7, 13, 17),
    MatmulShape::packed(6, 64, 128),
    MatmulShape::packed(13, 65, 129),
    MatmulShape::packed(37, 31, 257),
    MatmulShape::packed(5, 1030, 3),
    MatmulShape::packed(64, 33, 1),
    MatmulShape::packed(9, 11, 0),
    {.m = 31, .n = 70, .k = 40, .lda = 45, .ldb = 80, .ldc = 71},
};

void expect_correct(Version version, const char* name) {
  auto rng = workbook::testing::rng();
  for (const MatmulShape& s : kShapes) {
    const std::vector<float> a = lab02::oracle::random_matrix(s.m, s.k, s.lda, rng);
    const std::vector<float> b = lab02::oracle::random_matrix(s.k, s.n, s.ldb, rng);
    workbook::GuardedBuffer<float> c = lab02::oracle::output_for(s);
    lab02::oracle::fill_stale(c, s);
    version(a, b, c.span(), s);
    ASSERT_CORRECT(lab02::oracle::check(lab02::oracle::multiply(a, b, s), c, s))
        << name << " with " << lab02::oracle::describe(s);
  }
}

TEST(Versions, V1NaiveIsCorrect) {
  expect_correct(lab02::versions::matmul_v1_naive, "v1");
}
TEST(Versions, V2IkjIsCorrect) {
  expect_correct(lab02::versions::matmul_v2_ikj, "v2");
}
TEST(Versions, SeedBlockedIsCorrect) {
  expect_correct(lab02::versions::matmul_seed_blocked, "seed");
}
TEST(Versions, V3BlockedIsCorrect) {
  expect_correct(lab02::versions::matmul_v3_blocked, "v3");
}
TEST(Versions, V4RegisterBlockedIsCorrect) {
  expect_correct(lab02::versions::matmul_v4_register_blocked, "v4");
}

}  // namespace
