#pragma once
// Lab 04's earlier versions, kept beside the reference (quantize.cpp) so that the bench can show
// what each step of the handout buys. Each is correct; they differ only in speed.
#include <cstddef>
#include <cstdint>
#include <span>

namespace lab04::versions {

// The int8 product C = A * B^T: v1 -> v2 -> v3 -> v4 -> the reference (v5, lab04::matmul_int8:
// the AVX-512 VNNI micro-kernel on packed panels; v4b is its AVX-VNNI sibling). Same arguments and
// checks as matmul_int8.
using Product = void(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                     std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth);
// v1: three loops, one int32 sum at a time, auto-vectorisation off.
Product matmul_v1_scalar;
// v2: the same loops, vectorised by GCC.
Product matmul_v2_autovectorized;
// v3: vpdpbusd on the rows as they are, 4 x 4 dot products at a time (without AVX-512 VNNI: v2).
Product matmul_v3_vpdpbusd_rows;
// v4: the reference's packing and blocking with the AVX2 micro-kernel (vpmaddubsw + vpmaddwd);
// without AVX2: the portable kernel.
Product matmul_v4_packed_avx2;
// v4b: the same with the AVX-VNNI micro-kernel (vpdpbusd on ymm registers), the one machines with
// AVX-VNNI but no AVX-512 run as the reference; on a machine without AVX-VNNI, the best kernel
// without AVX-512 (v4b_kernel() names it).
Product matmul_v4b_packed_avx_vnni;
const char* v4b_kernel();
// The fallback for machines with neither: the same packing, a plain C++ micro-kernel.
Product matmul_portable_fallback;
// The micro-kernel the reference (v5) runs in this build: AVX-512 VNNI where the machine has it,
// else the best it has (the bench's label says which).
const char* reference_kernel();

// quantize: v1 -> v2 -> the reference (v3: AVX-512 conversions between floats and bytes).
void quantize_v1_scalar(std::span<const float> x, float scale, std::span<std::int8_t> q);
void quantize_v2_xsimd_conversions(std::span<const float> x, float scale, std::span<std::int8_t> q);
// quantize_rows: v1 -> the reference (v2: the scan of the next row fused into this row's pass).
void quantize_rows_v1_two_passes(std::span<const float> x, std::size_t cols,
                                 std::span<float> scales, std::span<std::int8_t> q);
// dequantize: v1 -> the reference.
void dequantize_v1_scalar(std::span<const std::int8_t> q, float scale, std::span<float> x);

}  // namespace lab04::versions
