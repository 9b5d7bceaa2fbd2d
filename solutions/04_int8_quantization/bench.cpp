// Lab 04 bench: every version of the int8 product and of quantization against this machine's
// measured ceilings, beside the baselines a user would pick instead: oneDNN's int8 product
// (u8s8s32), OpenBLAS sgemm and lab 02's fp32 reference, when they are built in (see
// CMakeLists.txt). Run: cmake --workflow --preset bench   (it prints this table and writes JSON and
// a plot)
#include "quantize.hpp"
#include "quantize_oracle.hpp"
#include "versions.hpp"

#include <workbook/bench.hpp>
#include <workbook/ceilings.hpp>
#include <workbook/report.hpp>
#include <workbook/tensor.hpp>

#include <cmath>
#include <iostream>
#include <optional>
#include <vector>

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
using workbook::Bench;
using workbook::Compute;
using workbook::Traffic;
using workbook::Work;

// C = A B^T on int8 operands of side n, int32 out: the work of every version of the product.
Work int8_product(std::size_t n) {
  const double side = static_cast<double>(n);
  return {.ops = 2 * side * side * side,
          .bytes = 2 * side * side + 4 * side * side,
          .compute = Compute::int8,
          .ops_unit = "OP"};
}
// The same product in fp32: 4-byte operands, and the FMA peak as its roof.
Work fp32_product(std::size_t n) {
  const double side = static_cast<double>(n);
  return {.ops = 2 * side * side * side, .bytes = 12 * side * side};
}

// The operands of a product of side n: int8 for the int8 kernels, the same values as floats for
// the fp32 baselines (so that every kernel computes the same product).
struct Operands {
  std::size_t n;
  AlignedVector<std::int8_t> a, b;
  AlignedVector<std::int32_t> c;
  AlignedVector<float> af, bf, cf;
  Operands(std::size_t n, workbook::Rng& rng)
      : n(n), a(n * n), b(n * n), c(n * n), af(n * n), bf(n * n), cf(n * n) {
    lab04::oracle::fill_int8(a, rng);
    lab04::oracle::fill_int8(b, rng);
    std::copy(a.begin(), a.end(), af.begin());
    std::copy(b.begin(), b.end(), bf.begin());
  }
  std::function<void()> version(v::Product* product) {
    return [this, product] { product(a, b, c, n, n, n); };
  }
};

std::string ratio(double numerator, double denominator) {
  return workbook::format_fixed(numerator / denominator, 2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string ceilings_path;
  std::filesystem::path results;
  if (!workbook::parse_bench_arguments(argc, argv, ceilings_path, results)) return 2;
  Bench bench("lab04", workbook::load_or_measure_ceilings(ceilings_path, false));
  workbook::Rng rng(workbook::seed_for("lab04.bench"));
#if defined(LAB04_HAVE_ONEDNN)
  omp_set_num_threads(1);  // every kernel here runs on one core
#endif
#if defined(LAB04_HAVE_OPENBLAS)
  openblas_set_num_threads(1);
#endif

  {  // The handout's ladder, at 512^3 so that v1 takes a fraction of a second.
    Operands p(512, rng);
    bench.compare("int8 product 512^3", int8_product(p.n),
                  {{"v1 scalar", p.version(v::matmul_v1_scalar)},
                   {"v2 auto-vectorized", p.version(v::matmul_v2_autovectorized)},
                   {"v3 vpdpbusd on rows, 4x4", p.version(v::matmul_v3_vpdpbusd_rows)},
                   {"v4 packed, AVX2 kernel", p.version(v::matmul_v4_packed_avx2)},
                   {"v5 packed, VNNI kernel", p.version(lab04::matmul_int8), Bench::kReference},
                   {"portable fallback (packed, C++)", p.version(v::matmul_portable_fallback)}});
  }

  {  // The target: 1024^3 on one core, against oneDNN's int8 product and the fp32 products.
    Operands p(1024, rng);
    const std::size_t n = p.n;
    std::vector<Bench::Version> versions = {
        {"v5 reference matmul_int8", p.version(lab04::matmul_int8), Bench::kReference},
        {"v4 packed, AVX2 kernel", p.version(v::matmul_v4_packed_avx2)},
        {"v3 vpdpbusd on rows, 4x4", p.version(v::matmul_v3_vpdpbusd_rows)}};
    std::optional<std::size_t> onednn, openblas, lab02;
#if defined(LAB04_HAVE_ONEDNN)
    // The same product: oneDNN takes A unsigned with an offset, so A's bytes + 128 with ao = 128
    // give (A + 128 - 128) B^T exactly. Checked once against the reference before timing.
    AlignedVector<std::uint8_t> a_unsigned(n * n);
    for (std::size_t i = 0; i < n * n; ++i)
      a_unsigned[i] = static_cast<std::uint8_t>(p.a[i] ^ 0x80);
    AlignedVector<std::int32_t> c_onednn(n * n);
    const std::int32_t c_offset = 0;
    auto run_onednn = [&] {
      const auto side = static_cast<dnnl_dim_t>(n);
      dnnl_gemm_u8s8s32('N', 'T', 'F', side, side, side, 1.0f, a_unsigned.data(), side, 128,
                        p.b.data(), side, 0, 0.0f, c_onednn.data(), side, &c_offset);
    };
    run_onednn();
    lab04::matmul_int8(p.a, p.b, p.c, n, n, n);
    std::cerr << "  oneDNN u8s8s32 computes the same product as the reference: "
              << (std::equal(p.c.begin(), p.c.end(), c_onednn.begin()) ? "yes" : "NO") << "\n";
    onednn = versions.size();
    versions.push_back({"oneDNN gemm_u8s8s32 (1 thread)", run_onednn});
#endif
#if defined(LAB04_HAVE_OPENBLAS)
    openblas = versions.size();
    versions.push_back({.label = "OpenBLAS sgemm, fp32 (1 thread)",
                        .kernel = [&] {
                          const int side = static_cast<int>(n);
                          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, side, side, side,
                                      1.0f, p.af.data(), side, p.bf.data(), side, 0.0f, p.cf.data(),
                                      side);
                        },
                        .work = fp32_product(n)});
#endif
#if defined(LAB04_HAVE_LAB02)
    lab02 = versions.size();
    versions.push_back(
        {.label = "lab 02 reference, fp32",
         .kernel = [&] { lab02::matmul(p.af, p.bf, p.cf, lab02::MatmulShape::packed(n, n, n)); },
         .work = fp32_product(n)});
#endif
    const auto analyses = bench.compare("int8 product 1024^3", int8_product(n), versions);
    const double reference = analyses[0].seconds;
    std::cout << "int8 product 1024^3, measured in one run, interleaved:\n";
    if (onednn)
      std::cout << "  the reference reaches "
                << workbook::format_percent(analyses[*onednn].seconds / reference)
                << " of oneDNN u8s8s32's speed (target: at least 40%)\n";
    if (openblas)
      std::cout << "  it is " << ratio(analyses[*openblas].seconds, reference)
                << "x as fast as OpenBLAS sgemm on the same product in fp32\n";
    if (lab02)
      std::cout << "  it is " << ratio(analyses[*lab02].seconds, reference)
                << "x as fast as lab 02's fp32 reference (target: at least 2x)\n";
  }

  {  // The float product of quantized matrices: the int8 product plus the rescaling, fused.
    const std::size_t n = 1024;
    AlignedVector<float> xa(n * n), xb(n * n), c(n * n), sa(n), sb(n);
    workbook::fill_uniform(xa, rng);
    workbook::fill_uniform(xb, rng);
    AlignedVector<std::int8_t> qa(n * n), qb(n * n);
    lab04::quantize_rows(xa, n, sa, qa);
    lab04::quantize_rows(xb, n, sb, qb);
    const lab04::QuantizedMatrix a{qa, sa, n, n}, b{qb, sb, n, n};
    Work work = int8_product(n);
    work.bytes += 8.0 * n;  // the scales
    bench.compare("quantized_matmul 1024^3", work,
                  {{"reference", [&] { lab04::quantized_matmul(a, b, c); }, Bench::kReference}});
  }

  {  // The elementwise kernels, from memory: 4 + 1 bytes per element (a float and a byte). Each
     // group also times the probe's copy kernel, interleaved with the others: on a busy machine
     // the memory roof moves, and the copy shows where it is during this very run.
    const std::size_t n = std::size_t{64} << 20;
    AlignedVector<float> x(n), back(n);
    workbook::fill_uniform(x, rng, -3.0, 3.0);
    AlignedVector<std::int8_t> q(n), relu_in(4 * n), relu_out(4 * n);
    const float scale = lab04::symmetric_scale(x);
    const Bench::Version copy{.label = "copy 64 Mi floats (the probe's kernel)",
                              .kernel = [&] { workbook::copy_streaming(x, back); },
                              .work = Work{.ops = 1.0 * n, .bytes = 8.0 * n}};
    bench.compare(
        "quantize, 64 Mi floats", {.ops = 4.0 * n, .bytes = 5.0 * n},
        {{"v1 scalar", [&] { v::quantize_v1_scalar(x, scale, q); }},
         {"v2 xsimd's conversions", [&] { v::quantize_v2_xsimd_conversions(x, scale, q); }},
         {"v3 AVX-512 conversions", [&] { lab04::quantize(x, scale, q); }, Bench::kReference},
         copy});
    bench.compare(
        "dequantize, 64 Mi bytes", {.ops = 1.0 * n, .bytes = 5.0 * n},
        {{"v1 scalar", [&] { v::dequantize_v1_scalar(q, scale, back); }},
         {"v2 AVX-512 conversions", [&] { lab04::dequantize(q, scale, back); }, Bench::kReference},
         copy});
    bench.compare("symmetric_scale, 64 Mi floats",
                  {.ops = 2.0 * n, .bytes = 4.0 * n, .traffic = Traffic::read},
                  {{"reference", [&] { lab04::symmetric_scale(x); }, Bench::kReference}, copy});
    AlignedVector<float> scales(n / 4096);
    bench.compare(
        "quantize_rows, 16384 x 4096", {.ops = 6.0 * n, .bytes = 5.0 * n},
        {{"v1 two passes per row", [&] { v::quantize_rows_v1_two_passes(x, 4096, scales, q); }},
         {"v2 next row's scan fused", [&] { lab04::quantize_rows(x, 4096, scales, q); },
          Bench::kReference},
         copy});
    lab04::oracle::fill_int8(relu_in, rng);
    bench.compare(
        "quantized_relu, 256 Mi bytes", {.ops = 4.0 * n, .bytes = 8.0 * n},
        {{"reference", [&] { lab04::quantized_relu(relu_in, relu_out); }, Bench::kReference},
         copy});
  }
  bench.finish(std::cout, results);
  return 0;
}
