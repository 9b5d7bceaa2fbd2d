#pragma once
// The reference's int8 matrix product, C = A * B^T summed in int32, in the structure of every fast
// GEMM since GotoBLAS: pack B into the order the inner loop reads it, then compute C tile by tile,
// each tile of kRows x kCols int32 sums held in registers for the whole depth.
//
// The micro-kernels, chosen at compile time for the instruction set the build targets (Best):
//   Vnni512     AVX-512 VNNI: vpdpbusd multiplies 64 unsigned bytes by 64 signed bytes and adds
//               each group of 4 products to one of 16 int32 lanes: 128 operations in one
//               instruction. It needs A unsigned: the kernel reads A as a + 128, and 128 * (the
//               sum of B's row) is subtracted (the offset trick of the handout).
//   AvxVnni256  AVX-VNNI: the same instruction on 256-bit registers, for machines with VNNI but
//               not AVX-512 (Intel client cores since Alder Lake, AMD Zen 5 client parts).
//   Avx2        AVX2 without VNNI: vpmaddubsw (u8 x s8, pairs summed to int16) and vpmaddwd
//               (pairs of int16 summed to int32). The int16 step saturates past 32767, so no +128
//               offset here: |a| goes in the unsigned operand and a's sign is moved onto b
//               (vpsignb); 2 * 127 * 127 = 32258 fits, which is why the range is [-127, 127].
//   Portable    plain C++ on the same packed layout, for any other machine.
//
// Every translation unit that includes this header gets its own copy (an anonymous namespace):
// versions_avx2.cpp and versions_avx_vnni.cpp compile it without AVX-512, to test and time those
// kernels on an AVX-512 machine.
#include "quantize_checks.hpp"

#include <workbook/buffer.hpp>
#include <workbook/machine.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
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

// The lowest of `count` bytes and of `lowest`: a min-reduction, which the compiler vectorises.
inline std::int8_t lowest_of(const std::int8_t* bytes, std::size_t count, std::int8_t lowest) {
  for (std::size_t k = 0; k < count; ++k) lowest = std::min(lowest, bytes[k]);
  return lowest;
}

#if defined(__AVX512F__)
// Transposes a 16 x 16 matrix of 4-byte words held in 16 registers: word j of x[i] goes to word i
// of x[j]. Four rounds of shuffles (pairs of words, pairs of pairs, then 128-bit lanes twice):
// 64 instructions for 1 KiB, where moving the words one by one takes 256 loads and 256 stores.
inline void transpose_16x16(__m512i x[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(x[i], x[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(x[i], x[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    x[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    x[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    x[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    x[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  // Now 128-bit lane l of x[4q + c] holds rows 4q .. 4q + 3 of word 4l + c: gather the lanes.
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_i32x4(x[i], x[i + 4], 0x88);      // lanes 0 and 2 of each
    t[i + 4] = _mm512_shuffle_i32x4(x[i], x[i + 4], 0xDD);  // lanes 1 and 3
    t[i + 8] = _mm512_shuffle_i32x4(x[i + 8], x[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_i32x4(x[i + 8], x[i + 12], 0xDD);
  }
  for (int i = 0; i < 4; ++i) {
    x[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
    x[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xDD);
    x[i + 4] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0x88);
    x[i + 12] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0xDD);
  }
}
#endif

// Packs `rows` (at most R) rows of x, each `depth` bytes, into a panel of R rows: for each group g
// of 4 bytes, R words of 4 bytes, row 0's k = 4g .. 4g + 3, row 1's, ... So the kernel reads the
// panel front to back, once per tile. Missing rows and the bytes past the depth in the last group
// are 0: they add nothing to the sums. Returns the lowest of the rows' bytes and 0 (multiply's
// range check rides along the packing: the bytes pass through registers anyway).
template <std::size_t R>
std::int8_t pack_panel(const std::int8_t* x, std::size_t rows, std::size_t depth,
                       std::int8_t* panel) {
  const std::size_t groups = groups_of(depth), whole = depth / kGroup;
  std::size_t first = 0;  // the first group left to the word-by-word loop below
  std::int8_t lowest = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  // Packing is a transposition of 4-byte words: 16 groups of 16 rows at a time, 64 bytes of each
  // row loaded at once. Word by word, packing took 6% of a 1024^3 product (perf record). (The
  // bytes' minimum, vpminsb on 64 bytes, needs AVX-512BW.)
  static_assert(R % 16 == 0);
  __m512i lowest_bytes = _mm512_setzero_si512();
  for (; first + 16 <= whole; first += 16)
    for (std::size_t r0 = 0; r0 < R; r0 += 16) {
      __m512i words[16];
      for (std::size_t i = 0; i < 16; ++i) {
        words[i] = r0 + i < rows ? _mm512_loadu_si512(x + (r0 + i) * depth + first * kGroup)
                                 : _mm512_setzero_si512();
        lowest_bytes = _mm512_min_epi8(lowest_bytes, words[i]);
      }
      transpose_16x16(words);  // words[j]: group first + j of rows r0 .. r0 + 15
      for (std::size_t j = 0; j < 16; ++j)
        _mm512_store_si512(panel + ((first + j) * R + r0) * kGroup, words[j]);
    }
  alignas(64) std::int8_t lanes[64];
  _mm512_store_si512(lanes, lowest_bytes);
  lowest = lowest_of(lanes, 64, lowest);
#endif
  for (std::size_t r = 0; r < R; ++r) {
    std::int8_t* out = panel + r * kGroup;
    if (r >= rows) {
      for (std::size_t g = first; g < groups; ++g) std::memset(out + g * R * kGroup, 0, kGroup);
      continue;
    }
    const std::int8_t* row = x + r * depth;
    lowest = lowest_of(row + first * kGroup, depth - first * kGroup, lowest);
    for (std::size_t g = first; g < whole; ++g)
      std::memcpy(out + g * R * kGroup, row + g * kGroup, kGroup);
    if (whole < groups) {  // the last, partial group: the missing bytes are 0
      std::memset(out + whole * R * kGroup, 0, kGroup);
      std::memcpy(out + whole * R * kGroup, row + whole * kGroup, depth - whole * kGroup);
    }
  }
  return lowest;
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// 6 rows x 64 columns: 24 accumulators + 4 columns of B + 1 broadcast of A = 29 of the 32 zmm
// registers. Per group of 4 k: 4 loads of B, 6 broadcasts of A, 24 vpdpbusd (3072 operations).
// (Measured alone, from the L1 cache: 830-850 GOP/s, about 95% of the probe's vpdpbusd peak; 8 x 3
// and 5 x 5 tiles ran the same, 4 x 6 and 12 x 2 slower.)
struct Vnni512 {
  static constexpr const char* kName = "AVX-512 VNNI vpdpbusd";
  static constexpr std::size_t kRows = 6, kVectors = 4, kCols = 16 * kVectors;
  // vpdpbusd's first operand is unsigned: A comes + 128 (multiply copies it so, copy_row).
  static constexpr bool kUnsignedA = true;

  // Rows r of the tile: A's row at a + r * a_stride, read as a row (4 bytes per step), and C's at
  // out + r * ld, written once at the end: straight into C when the tile is whole and C is int32.
  // The sums start from `start`, kCols values (the offset trick's correction, or zeros).
  LAB04_MICRO_KERNEL static void tile(const std::int8_t* a, std::size_t a_stride,
                                      const std::int8_t* b, std::size_t groups,
                                      const std::int32_t* start, std::int32_t* out,
                                      std::size_t ld) {
    __m512i acc[kRows][kVectors];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r)
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v) acc[r][v] = _mm512_loadu_si512(start + v * 16);
    for (std::size_t g = 0; g < groups; ++g, a += kGroup, b += kCols * kGroup) {
      __m512i columns[kVectors];  // 16 columns x 4 bytes each
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v) columns[v] = _mm512_load_si512(b + v * 64);
#pragma GCC unroll 8
      for (std::size_t r = 0; r < kRows; ++r) {
        std::int32_t word;  // row r's 4 bytes, + 128 already (multiply's copy of A)
        std::memcpy(&word, a + r * a_stride, kGroup);
        const __m512i row = _mm512_set1_epi32(word);
#pragma GCC unroll 8
        for (std::size_t v = 0; v < kVectors; ++v)
          acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], row, columns[v]);
      }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r)
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v)
        _mm512_storeu_si512(out + r * ld + v * 16, acc[r][v]);
  }

  // The offset trick's correction for each of a packed panel's kCols columns: -128 times the sum
  // of the column's bytes. vpdpbusd with 1 in every unsigned byte sums 4 bytes of B per lane, and
  // the panel holds the columns in the order of the tile's lanes, so 4 vectors of sums come out in
  // C's order. (A scalar loop over B's rows took 2% of a 1024^3 product: perf record.)
  static void corrections(const std::int8_t* panel, std::size_t groups, std::int32_t* out) {
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i sums[kVectors] = {};
    for (std::size_t g = 0; g < groups; ++g, panel += kCols * kGroup)
      for (std::size_t v = 0; v < kVectors; ++v)
        sums[v] = _mm512_dpbusd_epi32(sums[v], ones, _mm512_load_si512(panel + v * 64));
    // -128 sum = -(sum << 7), wrapping as the int32 lanes do: the sums reach 127 * depth at most.
    for (std::size_t v = 0; v < kVectors; ++v)
      _mm512_storeu_si512(out + v * 16,
                          _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sums[v], 7)));
  }
};
#endif

#if defined(__AVXVNNI__)
// AVX-VNNI: the same vpdpbusd on 256-bit registers, for machines that have it without AVX-512
// (Alder Lake and later Intel client cores). 6 rows x 16 columns: 12 accumulators + 2 columns of B
// + 1 broadcast of A = 15 of the 16 ymm registers. Per group of 4 k: 2 loads of B, 6 broadcasts
// of A, 12 vpdpbusd (768 operations).
struct AvxVnni256 {
  static constexpr const char* kName = "AVX-VNNI vpdpbusd (256-bit)";
  static constexpr std::size_t kRows = 6, kVectors = 2, kCols = 8 * kVectors;
  static constexpr bool kUnsignedA = true;  // as Vnni512: A read + 128

  LAB04_MICRO_KERNEL static void tile(const std::int8_t* a, std::size_t a_stride,
                                      const std::int8_t* b, std::size_t groups,
                                      const std::int32_t* start, std::int32_t* out,
                                      std::size_t ld) {
    __m256i acc[kRows][kVectors];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r)
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v)
        acc[r][v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(start + v * 8));
    for (std::size_t g = 0; g < groups; ++g, a += kGroup, b += kCols * kGroup) {
      __m256i columns[kVectors];  // 8 columns x 4 bytes each
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v)
        columns[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + v * 32));
#pragma GCC unroll 8
      for (std::size_t r = 0; r < kRows; ++r) {
        std::int32_t word;
        std::memcpy(&word, a + r * a_stride, kGroup);
        const __m256i row = _mm256_set1_epi32(word);  // a + 128 (multiply's copy)
#pragma GCC unroll 8
        for (std::size_t v = 0; v < kVectors; ++v)
          acc[r][v] = _mm256_dpbusd_avx_epi32(acc[r][v], row, columns[v]);
      }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r)
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * ld + v * 8), acc[r][v]);
  }

  // -128 times each column's sum, as Vnni512::corrections does it, 8 lanes at a time.
  static void corrections(const std::int8_t* panel, std::size_t groups, std::int32_t* out) {
    const __m256i ones = _mm256_set1_epi8(1);
    __m256i sums[kVectors] = {};
    for (std::size_t g = 0; g < groups; ++g, panel += kCols * kGroup)
      for (std::size_t v = 0; v < kVectors; ++v)
        sums[v] = _mm256_dpbusd_avx_epi32(
            sums[v], ones, _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + v * 32)));
    for (std::size_t v = 0; v < kVectors; ++v)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + v * 8),
                          _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(sums[v], 7)));
  }
};
#endif

#if defined(__AVX2__)
// 4 rows x 16 columns: 8 accumulators of the 16 ymm registers, the rest for B, A and temporaries.
struct Avx2 {
  static constexpr const char* kName = "AVX2 vpmaddubsw + vpmaddwd";
  static constexpr std::size_t kRows = 4, kVectors = 2, kCols = 8 * kVectors;
  static constexpr bool kUnsignedA = false;  // |a| and sign(a) instead: see the top of the file

  LAB04_MICRO_KERNEL static void tile(const std::int8_t* a, std::size_t a_stride,
                                      const std::int8_t* b, std::size_t groups,
                                      const std::int32_t* start, std::int32_t* out,
                                      std::size_t ld) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[kRows][kVectors];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r)
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v)
        acc[r][v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(start + v * 8));
    for (std::size_t g = 0; g < groups; ++g, a += kGroup, b += kCols * kGroup) {
      __m256i columns[kVectors];  // 8 columns x 4 bytes each
#pragma GCC unroll 8
      for (std::size_t v = 0; v < kVectors; ++v)
        columns[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + v * 32));
#pragma GCC unroll 8
      for (std::size_t r = 0; r < kRows; ++r) {
        std::int32_t word;
        std::memcpy(&word, a + r * a_stride, kGroup);
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
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * ld + v * 8), acc[r][v]);
  }
};
#endif

// Any machine: the same layout, summed in int32 (no overflow: |partial sums| <= 127^2 K).
struct Portable {
  static constexpr const char* kName = "portable C++";
  static constexpr std::size_t kRows = 4, kCols = 16;
  static constexpr bool kUnsignedA = false;

  LAB04_MICRO_KERNEL static void tile(const std::int8_t* a, std::size_t a_stride,
                                      const std::int8_t* b, std::size_t groups,
                                      const std::int32_t* start, std::int32_t* out,
                                      std::size_t ld) {
    std::int32_t acc[kRows][kCols];
    for (std::size_t r = 0; r < kRows; ++r) std::memcpy(acc[r], start, sizeof acc[r]);
    for (std::size_t g = 0; g < groups; ++g, a += kGroup, b += kCols * kGroup)
      for (std::size_t r = 0; r < kRows; ++r) {
        // Row r's 4 bytes, then one 4-term dot product per column (the compiler vectorises over
        // the columns, but the interleaved bytes of b cost it shuffles: this layout is made for a
        // dot-product instruction, which plain C++ cannot name).
        // Copied out with one 4-byte memcpy: read in place, GCC 12 vectorised the loop into loads
        // of 8 rows of A, the last 4 past the tile (unused, but past the end of A's copy they
        // faulted: valgrind and a crash of the bench showed it on an AVX2 Zen 3).
        std::int8_t word[kGroup];
        std::memcpy(word, a + r * a_stride, kGroup);
        const std::int32_t a0 = word[0], a1 = word[1], a2 = word[2], a3 = word[3];
        for (std::size_t c = 0; c < kCols; ++c) {
          const std::int8_t* column = b + c * kGroup;
          acc[r][c] += a0 * column[0] + a1 * column[1] + a2 * column[2] + a3 * column[3];
        }
      }
    for (std::size_t r = 0; r < kRows; ++r) std::memcpy(out + r * ld, acc[r], sizeof acc[r]);
  }
};

// The best kernel the build's instruction set allows (-march=native: this machine's).
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
using Best = Vnni512;
#elif defined(__AVXVNNI__)
using Best = AvxVnni256;
#elif defined(__AVX2__)
using Best = Avx2;
#else
using Best = Portable;
#endif

// How many panels of B a block holds: the block (panels x kCols columns x depth bytes) stays in the
// L2 cache while every row of tiles goes across it. Half of the L2 (as the OS reports it) leaves
// room for A's rows and the lines of C on their way out: 8 panels (512 columns) at depth 1024 with
// a 2 MiB L2. A third and a quarter ran within 2% of it (Xeon, 2026-11-26).
//
// No blocking of the depth: cutting it so that B's part of a panel (64 columns x 384 bytes) stays
// in the L1 cache was slower on Zen 5 (depth blocks of 256 to 768 bytes: 0.90-0.94x of oneDNN
// instead of 0.97-1.00x) and on the Xeon (256 to 512 bytes: 0.79-0.98x the speed): each tile of C
// then goes to memory and comes back once per block, and the L2 streams the panel of B fast enough
// (the kernel alone, its panel of B in the L2, ran at 94% of the vpdpbusd peak on the Xeon).
// Software prefetches of B (1 to 4 KiB ahead) and of C's lines, and an 8 x 48 tile, made no
// difference (measured; A's are another matter, see multiply).
template <class Kernel>
std::size_t block_panels(std::size_t depth) {
  // Read once; 256 KiB where the OS reports nothing.
  static const std::size_t l2 = std::max<std::size_t>(workbook::cache_sizes().l2, 256 << 10);
  return std::max<std::size_t>(1, l2 / 2 / (Kernel::kCols * std::max<std::size_t>(depth, 1)));
}

// Prefetches slice `part` of `parts` of the lines that hold the bytes at `at` into the L1 cache.
inline void prefetch_slice(const std::int8_t* at, std::size_t bytes, std::size_t part,
                           std::size_t parts) {
  constexpr std::size_t kLine = 64;
  const std::size_t into_line = reinterpret_cast<std::uintptr_t>(at) % kLine;
  at -= into_line;  // from the start of the first line, so that the last one is reached too
  bytes += into_line;
  const std::size_t slice = (bytes + kLine * parts - 1) / (kLine * parts) * kLine;
  for (std::size_t k = part * slice; k < std::min(bytes, (part + 1) * slice); k += kLine)
    __builtin_prefetch(at + k, 0, 3);
}

// The sum with its correction, added in unsigned arithmetic: it may wrap on the way (with the
// +128 offset a partial sum can pass 2^31), and the final value is exact.
inline std::int32_t corrected(std::int32_t sum, std::int32_t correction) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(sum) +
                                   static_cast<std::uint32_t>(correction));
}

// Stores the product into an int32 C with n columns. Passed to multiply, it has the kernel write
// whole tiles into C itself (see there); this call stores a tile computed in a buffer, of which
// only rows x cols are inside C.
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

// Copies a row of A, + 128 in each byte for a kernel that reads A unsigned (wrapping: the same
// as flipping the top bit, 0x80), and returns the lowest of its bytes and 0. Done once per call
// here, the kernel's inner loop has no add to do: on Intel's AVX-512 cores an add competes with
// vpdpbusd for the same two ports.
template <bool kUnsigned>
std::int8_t copy_row(const std::int8_t* from, std::size_t count, std::int8_t* to) {
  std::int8_t lowest = 0;
  for (std::size_t k = 0; k < count; ++k) {
    lowest = std::min(lowest, from[k]);
    to[k] =
        kUnsigned ? static_cast<std::int8_t>(static_cast<std::uint8_t>(from[k]) ^ 0x80u) : from[k];
  }
  return lowest;
}

template <class Store>
struct IsStoreInt32 : std::false_type {};
template <std::size_t kCols>
struct IsStoreInt32<StoreInt32<kCols>> : std::true_type {};

// C = A * B^T, tile by tile. With StoreInt32 the kernel writes each whole tile into C, its sums
// started from the correction (the offset trick's -128 * sum of B's row, or 0): a copy of every
// tile from a buffer with a scalar loop cost 10% of the time at 1024^3 (measured). Any other
// `store` (a float C, say) gets each tile's raw sums in a buffer: store(row, col, rows, cols, tile,
// correction), where tile is kRows x kCols (only rows x cols of it are inside C) and correction
// holds what to add to each of the cols columns.
//
// Both operands are copied first, once: B packed into panels (it is read many times), A + 128
// for a kernel that reads A unsigned, each row padded with zeros to a whole group of 4 and rows
// of zeros added up to a whole tile. The kernel is exact only for bytes in [-127, 127] (the AVX2
// kernel's |a|, the int32 sums up to kMaxDepth): the copies look for a -128 on their way, and if
// one is there, multiply returns false before it writes anything. (A pass of its own over A and B
// took 2-3% of the product: perf record, Xeon.) The copies are kept per thread between calls: as
// large as A and B themselves, padded, until the thread ends.
//
// B is used a block of panels at a time (block_panels). The tiles go across the block row by row:
// kRows rows of A against every panel of the block, then the next kRows rows. So C is written
// along its rows, in the order the hardware prefetchers follow. Going down a panel's column of
// tiles instead (each tile's 6 rows of C in 6 other pages) cost 5% at 1024^3 on the Xeon, the
// kernel alone 8-9% (measured). A tile's rows of A stay in the L1 cache while they go across the
// block; the next tile's rows are in none of the caches (A's copy and B's block do not both fit
// the L2), so they are prefetched a slice per panel on the way. Without that the kernel stalls on
// them at the start of each tile: on the Xeon of the GPU machine, at 2048^3, 0.93x of oneDNN's
// AVX-512 VNNI path instead of 1.02x (medians of 10 runs each; within the noise at 1024^3).
template <class Kernel, class Store>
[[nodiscard]] bool multiply(const std::int8_t* a, const std::int8_t* b, std::size_t m,
                            std::size_t n, std::size_t depth, Store&& store) {
  constexpr std::size_t R = Kernel::kRows, C = Kernel::kCols;
  constexpr bool into_c = IsStoreInt32<std::remove_cvref_t<Store>>::value;
  const std::size_t groups = groups_of(depth), padded_depth = groups * kGroup;
  const std::size_t panel_b = groups * C * kGroup;  // bytes per panel of B
  const std::size_t panels_b = (n + C - 1) / C;
  const std::size_t rows_a = (m + R - 1) / R * R;  // whole tiles

  // The buffers live on between calls: allocating (and first touching) megabytes per call costs
  // page faults a few percent of a 1024^3 product.
  thread_local workbook::AlignedVector<std::int8_t> packed_b, copy_a;
  thread_local workbook::AlignedVector<std::int32_t> correction;
  std::int8_t lowest = 0;
  packed_b.resize(panels_b * panel_b);
  for (std::size_t p = 0; p < panels_b; ++p)
    lowest = std::min(lowest, pack_panel<C>(b + p * C * depth, std::min(C, n - p * C), depth,
                                            packed_b.data() + p * panel_b));
  copy_a.resize(rows_a * padded_depth);
  for (std::size_t r = 0; r < rows_a; ++r) {
    std::int8_t* copy = copy_a.data() + r * padded_depth;
    const std::size_t copied = r < m ? depth : 0;
    if (copied > 0)
      lowest = std::min(lowest, copy_row<Kernel::kUnsignedA>(a + r * depth, depth, copy));
    std::memset(copy + copied, 0, padded_depth - copied);
  }
  if (lowest == std::numeric_limits<std::int8_t>::min()) return false;

  // sum_k (a + 128) b = sum_k a b + 128 sum_k b: subtract 128 times the sum of each row of B,
  // computed from the packed panels (Kernel::corrections). In wrapping arithmetic: the exact
  // result fits int32, so the wrapped one is exact too.
  correction.assign(panels_b * C, 0);
  if constexpr (Kernel::kUnsignedA)
    for (std::size_t p = 0; p < panels_b; ++p)
      Kernel::corrections(packed_b.data() + p * panel_b, groups, correction.data() + p * C);
  alignas(64) static constexpr std::int32_t zeros[C] = {};

  const std::size_t block = block_panels<Kernel>(padded_depth);
  const std::size_t tile_a = R * padded_depth;  // bytes of A's copy per tile
  alignas(64) std::int32_t tile[R * C];
  for (std::size_t p0 = 0; p0 < panels_b; p0 += block) {
    const std::size_t p1 = std::min(panels_b, p0 + block);  // the block: panels p0 .. p1 - 1
    for (std::size_t row = 0; row < m; row += R) {
      const std::int8_t* pa = copy_a.data() + row * padded_depth;
      const std::size_t tile_rows = std::min(R, m - row);
      for (std::size_t p = p0; p < p1; ++p) {
        if (row + R < m) prefetch_slice(pa + tile_a, tile_a, p - p0, p1 - p0);
        const std::int8_t* pb = packed_b.data() + p * panel_b;
        const std::size_t col = p * C, tile_cols = std::min(C, n - col);
        if constexpr (into_c) {
          if (tile_rows == R && tile_cols == C) {
            Kernel::tile(pa, padded_depth, pb, groups, correction.data() + col,
                         store.c + row * n + col, n);
            continue;
          }
        }
        Kernel::tile(pa, padded_depth, pb, groups, zeros, tile, C);
        store(row, col, tile_rows, tile_cols, tile, correction.data() + col);
      }
    }
  }
  return true;
}

// The product of matmul_int8 and quantized_matmul with their checks (quantize_checks.hpp): the
// shapes and depth first, then the range, which multiply checks on its copies of A and B. Only
// when it finds a -128 are A and B read again, to name the element in the message.
template <class Kernel, class Store>
void checked_multiply(std::string_view function, std::span<const std::int8_t> a,
                      std::span<const std::int8_t> b, std::size_t c_size, std::size_t m,
                      std::size_t n, std::size_t depth, Store&& store) {
  checks::require_int8_shapes(function, a, b, c_size, m, n, depth);
  if (multiply<Kernel>(a.data(), b.data(), m, n, depth, std::forward<Store>(store))) return;
  checks::require_symmetric(function, a, "a");
  checks::require_symmetric(function, b, "b");
  throw std::logic_error(std::string(function) +
                         ": the product found a -128 in a or b that the range check did not");
}

}  // namespace
}  // namespace lab04::gemm
