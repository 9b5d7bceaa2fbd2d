// Lab 04 bench: the lab's perf cases (labs/04_int8_quantization/tests/perf_cases.cpp: sizes,
// inputs, work models, and OpenBLAS sgemm beside quantized_matmul) timed with every numbered
// version in the kernel's place, against this machine's measured ceilings, beside the baselines a
// user would pick instead: oneDNN's int8 product (u8s8s32), OpenBLAS sgemm and lab 02's fp32
// reference on the same product, when they are built in (see CMakeLists.txt). Run: cmake
// --workflow --preset bench (it prints this table and writes JSON and a plot), or
// `lab04_bench --markdown` for the handout's table.
#include "quantize.hpp"
#include "versions.hpp"

#include <workbook/bench.hpp>
#include <workbook/buffer.hpp>
#include <workbook/ceilings.hpp>

#include <cstdint>
#include <span>
#include <string>

#if defined(LAB04_HAVE_ONEDNN)
#include <dnnl.h>
#include <omp.h>
#endif
#if defined(LAB04_HAVE_OPENBLAS)
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif
#if defined(LAB04_HAVE_LAB02)
#include "matmul.hpp"
#endif

namespace {

namespace v = lab04::versions;
using workbook::AlignedVector;
using workbook::LabBench;
using Int8Product = void(std::span<const std::int8_t>, std::span<const std::int8_t>,
                         std::span<std::int32_t>, std::size_t, std::size_t, std::size_t);

// The probe's copy of 64 Mi floats, beside each elementwise kernel: on a busy machine the memory
// roof moves, and the copy, timed interleaved with the kernels, shows where it is during this very
// run. Its own buffers, allocated at its first call.
constexpr std::size_t kCopied = std::size_t{64} << 20;
void copy_64_mi_floats() {
  static const AlignedVector<float> x(kCopied, 1.0f);
  static AlignedVector<float> y(kCopied);
  workbook::copy_streaming(x, y);
}
template <class R, class... Args>
LabBench::Version<R(Args...)> copy_baseline() {
  return {"copy 64 Mi floats (the probe's kernel)",
          [](Args...) -> R {
            copy_64_mi_floats();
            return R();
          },
          workbook::kBaseline,
          {},
          workbook::Work{.ops = 1.0 * kCopied, .bytes = 8.0 * kCopied}};
}

#if defined(LAB04_HAVE_OPENBLAS) || defined(LAB04_HAVE_LAB02)
// The fp32 baselines compute the same product on the same values as floats: converted once per
// input (the bench's inputs do not change while it times them), so that the product alone is timed.
struct AsFloats {
  const std::int8_t* from = nullptr;
  AlignedVector<float> values;
  std::span<const float> of(std::span<const std::int8_t> x) {
    if (from != x.data() || values.size() != x.size()) {
      values.assign(x.begin(), x.end());
      from = x.data();
    }
    return values;
  }
};
AsFloats a_float, b_float;
AlignedVector<float> c_float;
// The same product in fp32 at the side of the case matmul_int8 (1024): 4-byte operands and result,
// and the FMA peak as its roof.
const workbook::Work kFp32Product{.ops = 2.0 * 1024 * 1024 * 1024, .bytes = 12.0 * 1024 * 1024};
#endif

}  // namespace

int main(int argc, char** argv) {
#if defined(LAB04_HAVE_ONEDNN)
  omp_set_num_threads(1);  // every kernel here runs on one core
#endif
#if defined(LAB04_HAVE_OPENBLAS)
  openblas_set_num_threads(1);
#endif
  LabBench bench("lab04");
  // The handout's ladder at 512^3 (v1 takes a fraction of a second there), and at the target sizes
  // of 1024^3 and 2048^3 the versions that matter, the reference against the libraries (the slow
  // versions and the fp32 baselines at 1024^3 only).
  std::vector<LabBench::Version<Int8Product>> products = {
      {"v1 scalar", v::matmul_v1_scalar, true, {"matmul_int8_512"}},
      {"v2 auto-vectorized", v::matmul_v2_autovectorized, true, {"matmul_int8_512"}},
      {"v3 vpdpbusd on rows, 4x4",
       v::matmul_v3_vpdpbusd_rows,
       true,
       {"matmul_int8_512", "matmul_int8"}},
      {"v4 packed, AVX2 kernel",
       v::matmul_v4_packed_avx2,
       true,
       {"matmul_int8_512", "matmul_int8"}},
      {std::string("v4b packed, ") + v::v4b_kernel() + " kernel", v::matmul_v4b_packed_avx_vnni},
      {"portable fallback (packed, C++)", v::matmul_portable_fallback, true, {"matmul_int8_512"}}};
#if defined(LAB04_HAVE_ONEDNN)
  // oneDNN takes A unsigned with an offset: A's bytes + 128 with ao = 128 give (A + 128 - 128) B^T
  // exactly, so that it is checked like the versions. The shifted A is made once per input.
  products.push_back(
      {.label = "oneDNN gemm_u8s8s32 (1 thread)",
       .function =
           [](std::span<const std::int8_t> a, std::span<const std::int8_t> b,
              std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
             static const std::int8_t* from = nullptr;
             static AlignedVector<std::uint8_t> shifted;
             if (from != a.data() || shifted.size() != a.size()) {
               shifted.resize(a.size());
               for (std::size_t i = 0; i < a.size(); ++i)
                 shifted[i] = static_cast<std::uint8_t>(a[i] ^ 0x80);
               from = a.data();
             }
             const std::int32_t c_offset = 0;
             const auto rows = static_cast<dnnl_dim_t>(m), cols = static_cast<dnnl_dim_t>(n),
                        inner = static_cast<dnnl_dim_t>(depth);
             dnnl_gemm_u8s8s32('N', 'T', 'F', rows, cols, inner, 1.0f, shifted.data(), inner, 128,
                               b.data(), inner, 0, 0.0f, c.data(), cols, &c_offset);
           },
       .cases = {"matmul_int8", "matmul_int8_2048"},
       // The library the reference is held against: "Against the library" and versus_library.
       .library = true,
       // Seen on an AVX2 Zen 3 with Debian 12's oneDNN 2.6: nearly every element wrong.
       .known_wrong = "without VNNI, oneDNN multiplies with vpmaddubsw, which adds pairs of u8 x "
                      "s8 products in saturating int16 (oneDNN's docs: \"Nuances of int8 "
                      "computations\")"});
#endif
#if defined(LAB04_HAVE_OPENBLAS)
  products.push_back({"OpenBLAS sgemm, fp32 (1 thread)",
                      [](std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                         std::span<std::int32_t>, std::size_t m, std::size_t n, std::size_t depth) {
                        c_float.resize(m * n);
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m),
                                    static_cast<int>(n), static_cast<int>(depth), 1.0f,
                                    a_float.of(a).data(), static_cast<int>(depth),
                                    b_float.of(b).data(), static_cast<int>(depth), 0.0f,
                                    c_float.data(), static_cast<int>(n));
                      },
                      workbook::kBaseline,
                      {"matmul_int8"},
                      kFp32Product});
#endif
#if defined(LAB04_HAVE_LAB02)
  products.push_back({"lab 02 reference, fp32",
                      [](std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                         std::span<std::int32_t>, std::size_t m, std::size_t n, std::size_t depth) {
                        c_float.resize(m * n);
                        lab02::matmul(a_float.of(a), b_float.of(b), c_float,
                                      lab02::MatmulShape::packed(m, n, depth));
                      },
                      workbook::kBaseline,
                      {"matmul_int8"},
                      kFp32Product});
#endif
  bench.versions(lab04::matmul_int8, std::string("v5 packed, ") + v::reference_kernel() + " kernel",
                 std::move(products));

  // Without AVX-512 the reference converts as xsimd does: v3 is then v2 (quantize_loops.hpp).
#if defined(__AVX512F__)
  const std::string conversions = "AVX-512 conversions";
#else
  const std::string conversions = "xsimd's conversions (no AVX-512 here)";
#endif
  bench.versions(lab04::quantize, "v3 " + conversions,
                 {{"v1 scalar", v::quantize_v1_scalar},
                  {"v2 xsimd's conversions", v::quantize_v2_xsimd_conversions},
                  copy_baseline<void, std::span<const float>, float, std::span<std::int8_t>>()});
  bench.versions(lab04::dequantize, "v2 " + conversions,
                 {{"v1 scalar", v::dequantize_v1_scalar},
                  copy_baseline<void, std::span<const std::int8_t>, float, std::span<float>>()});
  bench.versions(lab04::symmetric_scale, "reference",
                 {copy_baseline<float, std::span<const float>>()});
  bench.versions(lab04::quantize_rows, "v2 next row's scan fused",
                 {{"v1 two passes per row", v::quantize_rows_v1_two_passes},
                  copy_baseline<void, std::span<const float>, std::size_t, std::span<float>,
                                std::span<std::int8_t>>()});
  bench.versions(lab04::quantized_relu, "reference",
                 {copy_baseline<void, std::span<const std::int8_t>, std::span<std::int8_t>>()});
  return bench.main(argc, argv);
}
