// Every numbered version of lab 02 is correct on the shapes that break blocked kernels: they differ
// only in speed.
#include "versions.hpp"
#include "blocking.hpp"
#include "matmul_oracle.hpp"
#include "micro_kernel.hpp"

#include <workbook/testing.hpp>

#include <vector>

namespace {

using lab02::MatmulShape;
using lab02::kernel::kMR;
using lab02::kernel::kNR;
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

template <class Multiply>
void expect_correct(Multiply version, const char* name,
                    const std::vector<MatmulShape>& shapes = kShapes) {
  auto rng = workbook::testing::rng();
  for (const MatmulShape& s : shapes) {
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

// The reference with blocks far smaller than any cache's: every loop of the blocked product runs
// several times (and ends in a partial block) even on these small shapes, whatever the machine.
// A depth of 40 (or k = 33) packs A 16 steps at a time twice, then step by step (with AVX-512).
TEST(Reference, CorrectWithSmallBlocks) {
  std::vector<MatmulShape> shapes = kShapes;
  shapes.push_back(MatmulShape::packed(50, 3 * kNR + 5, 70));
  shapes.push_back(
      {.m = 4 * kMR + 1, .n = 2 * kNR - 1, .k = 33, .lda = 40, .ldb = 2 * kNR, .ldc = 2 * kNR});
  for (const lab02::Blocks blocks :
       {lab02::Blocks{8, kMR, kNR}, lab02::Blocks{16, 3 * kMR, 2 * kNR},
        lab02::Blocks{40, 2 * kMR, kNR}, lab02::Blocks{1, kMR, kNR}}) {
    expect_correct([&](std::span<const float> a, std::span<const float> b, std::span<float> c,
                       const MatmulShape& s) { lab02::matmul_in_blocks(a, b, c, s, blocks); },
                   "the reference with small blocks", shapes);
  }
}

// Blocks of other sizes than multiples of the tile are still right; a block of 0 is refused.
TEST(Reference, AnyBlocksOfAtLeastOneAreRight) {
  expect_correct(
      [](std::span<const float> a, std::span<const float> b, std::span<float> c,
         const MatmulShape& s) {
        lab02::matmul_in_blocks(a, b, c, s, {7, kMR + 1, kNR + 3});
      },
      "the reference with blocks that are no multiple of the tile");
  const std::vector<float> a(4, 1.0f), b(4, 1.0f);
  std::vector<float> c(4);
  EXPECT_THROW(lab02::matmul_in_blocks(a, b, c, MatmulShape::packed(2, 2, 2), {0, kMR, kNR}),
               std::invalid_argument);
}

// The blocks follow the caches, by the rules in matmul.cpp.
TEST(Reference, BlocksFollowTheCaches) {
  constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;
  const auto expect_rules = [](const workbook::CacheSizes& caches, unsigned cores) {
    const lab02::Blocks blocks = lab02::blocks_for(caches, cores);
    SCOPED_TRACE("L2 " + std::to_string(caches.l2) + ", L3 " + std::to_string(caches.l3) + " for " +
                 std::to_string(cores) + " cores");
    EXPECT_EQ(blocks.mc % kMR, 0u);
    EXPECT_EQ(blocks.nc % kNR, 0u);
    EXPECT_GE(blocks.kc, 64u);
    EXPECT_LE(blocks.kc, 1024u);
    // The micro-panel of A in a quarter of the L1, the block of B in a quarter of the L2, the block
    // of A in half a core's share of the L3 and at most 8 MiB (each at least one micro-panel).
    const std::size_t l1 = caches.l1d > 0 ? caches.l1d : 32 * KiB;
    EXPECT_LE(kMR * blocks.kc * sizeof(float), std::max(l1 / 4, kMR * 64 * 4));
    if (caches.l2 > 0) {
      EXPECT_LE(blocks.kc * blocks.nc * sizeof(float),
                std::max(caches.l2 / 4, kNR * blocks.kc * 4));
    }
    EXPECT_LE(blocks.mc * blocks.kc * sizeof(float),
              std::max<std::size_t>(8 * MiB, kMR * blocks.kc * 4));
    if (caches.l3 > 0) {
      EXPECT_LE(blocks.mc * blocks.kc * sizeof(float),
                std::max(caches.l3 / cores / 2, kMR * blocks.kc * 4));
    }
    return blocks;
  };
  // A Zen 5 CCD: 48 KiB of L1 and 1 MiB of L2 per core, 32 MiB of L3 for 8 cores.
  const lab02::Blocks zen5 = expect_rules({48 * KiB, 1 * MiB, 32 * MiB}, 8);
  // A Sapphire Rapids socket: 48 KiB of L1, 2 MiB of L2 per core, 105 MiB of L3 for 56 cores.
  const lab02::Blocks sapphire_rapids = expect_rules({48 * KiB, 2 * MiB, 105 * MiB}, 56);
  // The same L1, the same depth; a bigger L2 holds a wider block of B; a smaller share of the L3 a
  // shorter block of A.
  EXPECT_EQ(sapphire_rapids.kc, zen5.kc);
  EXPECT_GT(sapphire_rapids.nc, zen5.nc);
  EXPECT_LT(sapphire_rapids.mc, zen5.mc);
  // A smaller L1, a shallower block.
  EXPECT_LT(expect_rules({32 * KiB, 1 * MiB, 32 * MiB}, 8).kc, zen5.kc);
  // Nothing reported: the small defaults, still valid blocks.
  expect_rules({}, 1);
  // A virtual machine that reports its host's whole L3 for 2 cores: the block of A stops at 8 MiB.
  const lab02::Blocks vm = expect_rules({48 * KiB, 1 * MiB, 508 * MiB}, 2);
  EXPECT_EQ(vm.mc, 8 * MiB / (vm.kc * sizeof(float)) / kMR * kMR);
  // The blocks this machine uses obey the same rules.
  const lab02::Blocks here = lab02::this_machines_blocks();
  EXPECT_GE(here.kc, 64u);
  EXPECT_EQ(here.mc % kMR, 0u);
  EXPECT_EQ(here.nc % kNR, 0u);
}

}  // namespace
