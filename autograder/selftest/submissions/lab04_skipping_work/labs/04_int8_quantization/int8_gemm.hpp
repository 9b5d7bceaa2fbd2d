#pragma once
// The reference's int8 matrix product, C = A * B^T summed in int32, in the structure of every fast
// GEMM since GotoBLAS: pack the operands into the order the inner loop reads them, then compute
// C tile by tile, each tile of kRows x kCols int32 sums held in registers for the whole depth.
//
// The micro-kernels, chosen at compile time for the instruction set the build targets:
//   Vnni512   AVX-512 VNNI: vpdpbusd multiplies 64 unsigned bytes by 64 signed bytes and adds each
//             group of 4 products to one of 16 int32 lanes: 128 operations in one instruction.
//             It needs A unsigned: A is packed as a + 128, and 128 * (the sum of B's row) is
//             subtracted at the end (the offset trick of the handout).
//   Avx2      AVX2 without VNNI: vpmaddubsw (u8 x s8, pairs summed to int16) and vpmaddwd (pairs
//             of int16 summed to int32). The int16 step saturates past 32767, so no +128 offset
//             here: |a| goes in the unsigned operand and a's sign is moved onto b (vpsignb);
//             2 * 127 * 127 = 32258 fits, which is why the range is [-127, 127].
//   Portable  plain C++ on the same packed layout, for any other machine.
//
// Every translation unit that includes this header gets its own copy (an anonymous namespace):
// versions_avx2.cpp compiles it for AVX2 only, to test and time that kernel on an AVX-512 machine.
#include <workbook/buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

// The accumulators of a micro-kernel must live in registers for the whole loop. GCC 12 manages
// that only when the loops over them are unrolled completely (#pragma GCC unroll), the kernel is
// compiled on its own (noinline) and not specialised for constant arguments (noclone): otherwise
// it kept some of the 24 on the stack, and the product ran at less than half the speed (measured;
// objdump -d shows it as loads and stores at (%rsp) in the inner loop).
#if defined(__GNUC__) && !defined(__clang__)
#define LAB04_MICRO_KERNEL __attribute__((noinline, noclone))
#else
#define LAB04_MICRO_KERNEL __attribute__((noinline))
#endif

namespace lab04::gemm {
namespace {

// One int32 lane of vpdpbusd sums the products of 4 consecutive bytes: the depth is walked in
// groups of 4. A packed panel of R rows stores, for each group g, R words of 4 bytes: row 0's
// k = 4g .. 4g + 3, row 1's, ... So the kernel reads each panel front to back, once.
constexpr std::size_t kGroup = 4;

inline std::size_t groups_of(std::size_t depth) {
  return (depth + kGroup - 1) / kGroup;
}

// Packs `rows` (at most R) rows of x (each `depth` bytes) into a panel of R rows, each 4-byte word
// XORed with `flip` (0x80808080 adds 128 to every byte: a signed byte + 128 as an unsigned byte).
// Missing rows and the bytes past the depth in the last group are 0 (they multiply B's zeros).
template <std::size_t R>
void pack_panel(const std::int8_t* x, std::size_t rows, std::size_t depth, std::uint32_t flip,
                std::int8_t* panel) {
  const std::size_t groups = groups_of(depth), whole = depth / kGroup;
  for (std::size_t r = 0; r < R; ++r) {
    std::int8_t* out = panel + r * kGroup;
    if (r >= rows) {
      for (std::size_t g = 0; g < groups; ++g) std::memset(out + g * R * kGroup, 0, kGroup);
      continue;
    }
    const std::int8_t* row = x + r * depth;
    for (std::size_t g = 0; g < whole; ++g) {
      std::uint32_t word;
      std::memcpy(&word, row + g * kGroup, kGroup);
      word ^= flip;
      std::memcpy(out + g * R * kGroup, &word, kGroup);
    }
    if (whole < groups) {  // the last, partial group: the missing bytes are 0 (before the flip)
      std::int8_t bytes[kGroup] = {};
      std::memcpy(bytes, row + whole * kGroup, depth - whole * kGroup);
      std::uint32_t word;
      std::memcpy(&word, bytes, kGroup);
      word ^= flip;
      std::memcpy(out + whole * R * kGroup, &word, kGroup);
    }
  }
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// 6 rows x 64 columns: 24 accumulators + 4 columns of B + 1 broadcast of A = 29 of the 32 zmm
// registers. Per group of 4 k: 4 loads of B, 6 broadcasts of A, 24 vpdpbusd (3072 operations).
struct Vnni512 {
  static constexpr const char* kName = "AVX-512 VNNI vpdpbusd";
  static constexpr std::size_t kRows = 6, kVectors = 4, kCols = 16 * kVectors;
  // vpdpbusd's first operand is unsigned: A is packed + 128.
  static constexpr bool kUnsignedA = true;

  LAB04_MICRO_KERNEL static void tile(const std::int8_t* a, const std::int8_t* b,
                                      std::size_t groups, std::int32_t* out) {
    __m512i acc[kRows][kVectors];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r)
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = _mm512_setzero_si512();
    for (std::size_t g = 0; g < groups; ++g, a += kRows * kGroup, b += kCols * kGroup) {
      __m512i columns[kVectors];  // 16 columns x 4 bytes each
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v) columns[v] = _mm512_load_si512(b + v * 64);
#pragma GCC unroll 8
      for (std::size_t r = 0; r < kRows; ++r) {
        std::int32_t word;
        std::memcpy(&word, a + r * kGroup, kGroup);
        const __m512i row = _mm512_set1_epi32(word);  // row r's 4 bytes, in every lane
#pragma GCC unroll 8
        for (std::size_t v = 0; v < kVectors; ++v)
          acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], row, columns[v]);
      }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r)
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v)
        _mm512_store_si512(out + r * kCols + v * 16, acc[r][v]);
  }
};
#endif

#if defined(__AVX2__)
// 4 rows x 16 columns: 8 accumulators of the 16 ymm registers, the rest for B, A and temporaries.
struct Avx2 {
  static constexpr const char* kName = "AVX2 vpmaddubsw + vpmaddwd";
  static constexpr std::size_t kRows = 4, kVectors = 2, kCols = 8 * kVectors;
  static constexpr bool kUnsignedA = false;  // |a| and sign(a) instead: see the top of the file

  LAB04_MICRO_KERNEL static void tile(const std::int8_t* a, const std::int8_t* b,
                                      std::size_t groups, std::int32_t* out) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[kRows][kVectors];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r)
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = _mm256_setzero_si256();
    for (std::size_t g = 0; g < groups; ++g, a += kRows * kGroup, b += kCols * kGroup) {
      __m256i columns[kVectors];  // 8 columns x 4 bytes each
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v)
        columns[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + v * 32));
#pragma GCC unroll 8
      for (std::size_t r = 0; r < kRows; ++r) {
        std::int32_t word;
        std::memcpy(&word, a + r * kGroup, kGroup);
        const __m256i row = _mm256_set1_epi32(word);
        const __m256i magnitude = _mm256_abs_epi8(row);  // |a| <= 127: a valid unsigned byte
#pragma GCC unroll 8
        for (std::size_t v = 0; v < kVectors; ++v) {
          // |a| * (b * sign(a)) = a b. Pairs summed to int16 (at most 2 * 127 * 127, no
          // saturation), then pairs of pairs summed to int32 by multiplying with 1.
          const __m256i signed_b = _mm256_sign_epi8(columns[v], row);
          const __m256i pairs = _mm256_maddubs_epi16(magnitude, signed_b);
          acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(pairs, ones));
        }
      }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r)
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v)
        _mm256_store_si256(reinterpret_cast<__m256i*>(out + r * kCols + v * 8), acc[r][v]);
  }
};
#endif

// Any machine: the same packed layout, summed in int32 (no overflow: |partial sums| <= 127^2 K).
struct Portable {
  static constexpr const char* kName = "portable C++";
  static constexpr std::size_t kRows = 4, kCols = 16;
  static constexpr bool kUnsignedA = false;

  LAB04_MICRO_KERNEL static void tile(const std::int8_t* a, const std::int8_t* b,
                                      std::size_t groups, std::int32_t* out) {
    std::int32_t acc[kRows][kCols] = {};
    for (std::size_t g = 0; g < groups; ++g, a += kRows * kGroup, b += kCols * kGroup)
      for (std::size_t r = 0; r < kRows; ++r) {
        // Row r's 4 bytes, then one 4-term dot product per column (the compiler vectorises over
        // the columns, but the interleaved bytes of b cost it shuffles: this layout is made for a
        // dot-product instruction, which plain C++ cannot name).
        const std::int32_t a0 = a[r * kGroup], a1 = a[r * kGroup + 1], a2 = a[r * kGroup + 2],
                           a3 = a[r * kGroup + 3];
        for (std::size_t c = 0; c < kCols; ++c) {
          const std::int8_t* column = b + c * kGroup;
          acc[r][c] += a0 * column[0] + a1 * column[1] + a2 * column[2] + a3 * column[3];
        }
      }
    std::memcpy(out, acc, sizeof acc);
  }
};

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
using Best = Vnni512;
#elif defined(__AVX2__)
using Best = Avx2;
#else
using Best = Portable;
#endif

// How many rows of A to pack at a time: the packed block (rows x depth bytes) stays in the L2
// cache while every panel of B goes by. A quarter of this machine's 1 MiB L2 leaves room for the
// B panel and C; at depth 1024 that is 252 rows (a multiple of kRows). The speed was the same
// from 96 KiB to 512 KiB here (measured): the L2 keeps up either way.
template <class Kernel>
std::size_t block_rows(std::size_t depth) {
  constexpr std::size_t kBlockBytes = std::size_t{256} << 10;
  const std::size_t rows = kBlockBytes / std::max<std::size_t>(groups_of(depth) * kGroup, 1);
  return std::max(Kernel::kRows, rows / Kernel::kRows * Kernel::kRows);
}

// The int32 result of one tile, handed to `store` with its place: store(row, col, rows, cols, tile,
// correction), where tile is kRows x kCols (only rows x cols of it are inside C) and correction
// holds what to add to each of the cols columns (the offset trick's -128 * sum of B's row, or 0).
//
// Packed B takes n x depth bytes (all of B at once: it is read many times) and packed A one block.
template <class Kernel, class Store>
void multiply(const std::int8_t* a, const std::int8_t* b, std::size_t m, std::size_t n,
              std::size_t depth, Store&& store) {
  constexpr std::size_t R = Kernel::kRows, C = Kernel::kCols;
  const std::size_t groups = groups_of(depth);
  const std::size_t panel_a = groups * R * kGroup,
                    panel_b = groups * C * kGroup;  // bytes per panel
  const std::size_t panels_b = (n + C - 1) / C;
  const std::uint32_t flip = Kernel::kUnsignedA ? 0x80808080u : 0u;

  // The buffers live on between calls: allocating (and first touching) megabytes per call costs
  // page faults a few percent of a 1024^3 product.
  thread_local workbook::AlignedVector<std::int8_t> packed_a, packed_b;
  thread_local std::vector<std::int32_t> correction;
  packed_b.resize(panels_b * panel_b);
  for (std::size_t p = 0; p < panels_b; ++p)
    pack_panel<C>(b + p * C * depth, std::min(C, n - p * C), depth, 0,
                  packed_b.data() + p * panel_b);

  // sum_k (a + 128) b = sum_k a b + 128 sum_k b: subtract 128 times the sum of each row of B. In
  // unsigned (wrapping) arithmetic: the exact result fits int32, so the wrapped one is exact too.
  correction.assign(panels_b * C, 0);
  if constexpr (Kernel::kUnsignedA) {
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t sum = 0;  // |sum| <= 127 * kMaxDepth < 2^31
      for (std::size_t k = 0; k < depth; ++k) sum += b[j * depth + k];
      correction[j] = static_cast<std::int32_t>(0u - 128u * static_cast<std::uint32_t>(sum));
    }
  }

  const std::size_t block = block_rows<Kernel>(depth);
  packed_a.resize((block + R - 1) / R * panel_a);
  alignas(64) std::int32_t tile[R * C];
  for (std::size_t i0 = 0; i0 < m; i0 += block) {
    const std::size_t rows = std::min(block, m - i0), panels_a = (rows + R - 1) / R;
    for (std::size_t q = 0; q < panels_a; ++q)
      pack_panel<R>(a + (i0 + q * R) * depth, std::min(R, rows - q * R), depth, flip,
                    packed_a.data() + q * panel_a);
    // One panel of B (C columns x depth) stays in the L1 or L2 cache while every panel of A goes
    // by.
    for (std::size_t p = 0; p < panels_b; ++p)
      for (std::size_t q = 0; q < panels_a; ++q) {
        Kernel::tile(packed_a.data() + q * panel_a, packed_b.data() + p * panel_b, groups, tile);
        store(i0 + q * R, p * C, std::min(R, rows - q * R), std::min(C, n - p * C), tile,
              correction.data() + p * C);
      }
  }
}

// The sum with its correction, added in unsigned arithmetic: it may wrap on the way (with the
// +128 offset a partial sum can pass 2^31), and the final value is exact.
inline std::int32_t corrected(std::int32_t sum, std::int32_t correction) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(sum) +
                                   static_cast<std::uint32_t>(correction));
}

// Stores tiles into an int32 C with n columns.
template <std::size_t kCols>
struct StoreInt32 {
  std::int32_t* c;
  std::size_t n;
  void operator()(std::size_t row, std::size_t col, std::size_t rows, std::size_t cols,
                  const std::int32_t* tile, const std::int32_t* correction) const {
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < cols; ++j)
        c[(row + r) * n + col + j] = corrected(tile[r * kCols + j], correction[j]);
  }
};

}  // namespace
}  // namespace lab04::gemm
