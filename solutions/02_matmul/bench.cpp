// Lab 02 bench: every version of matmul, and OpenBLAS sgemm when it is installed, against this
// machine's measured FMA peak. Run: cmake --workflow --preset bench (it prints this table and
// writes JSON and a plot), or build/bench/labs/02_matmul/solution/lab02_bench.
#include "matmul.hpp"
#include "versions.hpp"

#include <workbook/bench.hpp>
#include <workbook/buffer.hpp>
#include <workbook/ceilings.hpp>

#include <iostream>
#include <string>

#if defined(LAB02_HAVE_OPENBLAS)
#include <cblas.h>
#endif

namespace {

namespace v = lab02::versions;
using lab02::MatmulShape;
using workbook::Bench;

// Square or not, packed matrices of uniform draws, and the work the roofline counts for them.
struct Problem {
  MatmulShape shape;
  workbook::AlignedVector<float> a, b, c;
  workbook::Work work;

  Problem(std::size_t m, std::size_t n, std::size_t k, workbook::Rng& rng)
      : shape(MatmulShape::packed(m, n, k)), a(m * k), b(k * n), c(m * n) {
    workbook::fill_uniform(a, rng);
    workbook::fill_uniform(b, rng);
    // 2 FLOP per term; A and B read once, C written once: the least any kernel moves.
    work = {.ops = 2.0 * double(m) * double(n) * double(k),
            .bytes = 4.0 * double(m * k + k * n + m * n),
            .traffic = workbook::Traffic::triad};
  }
  // One call of a version on this problem.
  template <class Version>
  Bench::Version run(std::string label, Version version, bool reference = false) {
    return {std::move(label), [this, version] { version(a, b, c, shape); }, reference};
  }
  Bench::Version reference() {
    return run("v5 packed (the reference)", lab02::matmul, Bench::kReference);
  }
};

#if defined(LAB02_HAVE_OPENBLAS)
Bench::Version openblas(Problem& p) {
  return {std::string("OpenBLAS sgemm (") + openblas_get_corename() + " kernels)", [&p] {
            const MatmulShape& s = p.shape;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n), int(s.k),
                        1.0f, p.a.data(), int(s.lda), p.b.data(), int(s.ldb), 0.0f, p.c.data(),
                        int(s.ldc));
          }};
}
#endif

// Adds OpenBLAS to a group when it is installed.
std::vector<Bench::Version> with_library(std::vector<Bench::Version> versions,
                                         [[maybe_unused]] Problem& p) {
#if defined(LAB02_HAVE_OPENBLAS)
  versions.push_back(openblas(p));
#endif
  return versions;
}

// The versions that finish in well under a second at every size here: from v2 on, and OpenBLAS.
std::vector<Bench::Version> fast_versions(Problem& p) {
  return with_library(
      {p.run("v2 i-k-j", v::matmul_v2_ikj), p.run("v3 cache-blocked i-k-j", v::matmul_v3_blocked),
       p.run("v4 register-blocked", v::matmul_v4_register_blocked), p.reference()},
      p);
}

}  // namespace

int main(int argc, char** argv) {
  std::string ceilings_path;
  std::filesystem::path results;
  if (!workbook::parse_bench_arguments(argc, argv, ceilings_path, results)) return 2;
  Bench bench("lab02", workbook::load_or_measure_ceilings(ceilings_path, false));
  workbook::Rng rng(workbook::seed_for("lab02.bench"));
#if defined(LAB02_HAVE_OPENBLAS)
  openblas_set_num_threads(1);
  std::cerr << "  OpenBLAS: " << openblas_get_config()
            << " (OPENBLAS_CORETYPE chooses the kernels)\n";
#endif

  {  // Every version at the lab's size. v1 and the seed's blocking take seconds per call: 3 rounds.
    Problem p(1024, 1024, 1024, rng);
    std::vector<Bench::Version> all = {
        p.run("v1 naive i-j-k", v::matmul_v1_naive),
        p.run("seed: 6 loops, 32^3 blocks, i-j-k inside", v::matmul_seed_blocked)};
    for (Bench::Version& version : fast_versions(p)) all.push_back(std::move(version));
    bench.compare("matmul 1024^3, every version", p.work, all, {.max_seconds = 2.0});
    // The headline ratio, the reference against the library, with more rounds.
    bench.compare("matmul 1024^3, reference vs library", p.work, with_library({p.reference()}, p),
                  {.max_seconds = 3.0});
  }
  {  // Larger than the L2 many times over: where cache blocking pays, and packing.
    Problem p(2048, 2048, 2048, rng);
    bench.compare("matmul 2048^3", p.work, fast_versions(p));
  }
  {  // Primes: v4's leftover rows and columns go through v3's loop; v5 pads them into whole tiles.
    Problem p(509, 521, 503, rng);
    bench.compare("matmul 509 x 521 x 503", p.work, fast_versions(p));
  }
  bench.finish(std::cout, results);
  return 0;
}
