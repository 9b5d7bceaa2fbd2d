// Lab 04 reference solution: symmetric int8 quantization with xsimd, and the int8 matrix product
// on the int8 dot-product instruction (vpdpbusd), packed and register-blocked (int8_gemm.hpp).
//
// The elementwise kernels move 5 bytes per element (a float and a byte) and are memory bound: they
// aim at the copy bandwidth. The product does 2 K operations per output and is compute bound: it
// aims at the int8 dot-product peak, four times the fp32 FMA peak in operations per second.

#include "gcc_avx512_warnings.hpp"  // first: see inside

#include "quantize.hpp"
#include "quantize_checks.hpp"

#include "int8_gemm.hpp"
#include "quantize_loops.hpp"

#include <workbook/require.hpp>
#include <workbook/simd.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <xsimd/xsimd.hpp>

namespace lab04 {
namespace {

using loops::Conversions;
using loops::FloatBatch;
using loops::kLanes;
using ByteBatch = xsimd::batch<std::int8_t>;

// The symmetric scale of a scanned tensor: max |x_i| / 127, or 1 when that is 0 (all zeros, or
// an underflow: any scale would do); throws for NaN and infinities, naming the first.
float scale_from(const loops::Scan& scan, std::span<const float> x, const char* function,
                 std::size_t offset) {
  if (!scan.finite()) loops::reject(function, x, true, offset);
  const float scale = scan.largest() / static_cast<float>(kQuantMax);
  return scale > 0 ? scale : 1.0f;
}

// max |x_i| / 127, or 1 when that is 0; throws for NaN and infinities. Four scans: the loop is
// memory bound, and four independent maxima hide the latency of vmaxps whatever the bandwidth.
float scale_of(std::span<const float> x, const char* function, std::size_t offset) {
  constexpr std::size_t kScans = 4;
  loops::Scan scans[kScans];
  std::size_t i = 0;
  for (; i + kScans * kLanes <= x.size(); i += kScans * kLanes)
    for (std::size_t k = 0; k < kScans; ++k)
      scans[k].add(FloatBatch::load_unaligned(&x[i + k * kLanes]));
  for (; i + kLanes <= x.size(); i += kLanes) scans[0].add(FloatBatch::load_unaligned(&x[i]));
  for (; i < x.size(); ++i) scans[0].add(x[i]);
  for (std::size_t k = 1; k < kScans; ++k) scans[0].add(scans[k]);
  return scale_from(scans[0], x, function, offset);
}

}  // namespace

float symmetric_scale(std::span<const float> x) {
  return scale_of(x, "symmetric_scale", 0);
}

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  workbook::require_same_size("quantize", x.size(), "x", q.size(), "q");
  checks::require_scale("quantize", scale);
  const bool large = q.size() >= loops::kStreamingBytes;
  loops::quantize<Conversions::native>(x, scale, q.data(), large, "quantize", 0);
  if (large) workbook::stream_fence();
}

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> x) {
  workbook::require_same_size("dequantize", q.size(), "q", x.size(), "x");
  checks::require_scale("dequantize", scale);
  const FloatBatch factor(scale);
  loops::elementwise<FloatBatch>(
      x.data(), x.size(),
      [&](std::size_t i) { return loops::load_bytes<Conversions::native>(&q[i]) * factor; },
      [&](std::size_t i) { return static_cast<float>(q[i]) * scale; });
}

void quantize_rows(std::span<const float> x, std::size_t cols, std::span<float> scales,
                   std::span<std::int8_t> q) {
  const std::size_t rows =
      checks::require_rows("quantize_rows", x.size(), cols, scales.size(), q.size());
  // A row needs two passes, its scale and then its values; the second finds the row in the cache
  // (4096 floats are 16 KiB). Done one after the other, memory would idle during the second pass:
  // instead, the scan of row r + 1 runs inside the quantization of row r, and memory streams all
  // the time. The output streams if the whole of it is large.
  if (rows == 0) return;
  const bool large = q.size() >= loops::kStreamingBytes;
  scales[0] = scale_of(x.first(cols), "quantize_rows", 0);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::span<const float> row = x.subspan(r * cols, cols);
    const std::span<const float> next =
        r + 1 < rows ? x.subspan((r + 1) * cols, cols) : std::span<const float>();
    loops::Scan scan;
    loops::quantize<Conversions::native>(row, scales[r], q.data() + r * cols, large,
                                         "quantize_rows", r * cols, next, &scan);
    if (!next.empty()) scales[r + 1] = scale_from(scan, next, "quantize_rows", (r + 1) * cols);
  }
  if (large) workbook::stream_fence();
}

void quantized_relu(std::span<const std::int8_t> q, std::span<std::int8_t> out) {
  workbook::require_elementwise("quantized_relu", q, "q", out, "out");
  const ByteBatch zero(0);
  loops::elementwise<ByteBatch>(
      out.data(), out.size(),
      [&](std::size_t i) { return xsimd::max(ByteBatch::load_unaligned(&q[i]), zero); },
      [&](std::size_t i) { return std::max<std::int8_t>(q[i], 0); });
}

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  using Kernel = gemm::Best;
  gemm::checked_multiply<Kernel>("matmul_int8", a, b, c.size(), m, n, depth,
                                 gemm::StoreInt32<Kernel::kCols>{c.data(), n});
}

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  checks::require_quantized("quantized_matmul", a, "a");
  checks::require_quantized("quantized_matmul", b, "b");
  workbook::require_same_size("quantized_matmul", a.cols, "a.cols", b.cols, "b.cols");
  checks::require_matrix("quantized_matmul", c.size(), "c", a.rows, b.rows);
  using Kernel = gemm::Best;
  using IntBatch = xsimd::batch<std::int32_t>;
  const std::size_t n = b.rows;
  // B's scale of each column, as a row a batch can load (b.scales may hold one for all).
  thread_local std::vector<float> column_scales;
  column_scales.resize(n);
  for (std::size_t j = 0; j < n; ++j) column_scales[j] = b.scale(j);
  // The rescaling is fused into the store of each tile: the int32 sums never go to memory. A
  // batch of columns at a time (a scalar loop here cost as much as 10% of the product).
  gemm::checked_multiply<Kernel>(
      "quantized_matmul", a.values, b.values, c.size(), a.rows, n, a.cols,
      [&](std::size_t row, std::size_t col, std::size_t rows, std::size_t cols,
          const std::int32_t* tile, const std::int32_t* correction) {
        for (std::size_t r = 0; r < rows; ++r) {
          const float sa = a.scale(row + r);
          const std::int32_t* sums = tile + r * Kernel::kCols;
          const float* sb = column_scales.data() + col;
          float* out = c.data() + (row + r) * n + col;
          std::size_t j = 0;
          // The int32 additions wrap, as gemm::corrected's: the sum is exact at the end.
          for (; j + kLanes <= cols; j += kLanes) {
            const IntBatch sum =
                IntBatch::load_aligned(sums + j) + IntBatch::load_unaligned(correction + j);
            const FloatBatch value = xsimd::batch_cast<float>(sum);
            (value * (FloatBatch(sa) * FloatBatch::load_unaligned(sb + j)))
                .store_unaligned(out + j);
          }
          for (; j < cols; ++j)
            out[j] = static_cast<float>(gemm::corrected(sums[j], correction[j])) * (sa * sb[j]);
        }
      });
}

}  // namespace lab04
