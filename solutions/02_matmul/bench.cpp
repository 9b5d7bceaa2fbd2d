// Lab 02 bench: the lab's perf cases (labs/02_matmul/tests/perf_cases.cpp: shapes, inputs, work
// model, and OpenBLAS sgemm beside them when it is installed) timed with every numbered version of
// matmul in its place, against this machine's measured FMA peak. Run: cmake --workflow --preset
// bench (it prints this table and writes JSON and a plot), or `lab02_bench --markdown` for the
// handout's table.
#include "blocking.hpp"
#include "matmul.hpp"
#include "versions.hpp"

#include <workbook/bench.hpp>

#include <iostream>
#include <thread>

#if defined(LAB02_HAVE_OPENBLAS)
#include <cblas.h>
#endif

namespace v = lab02::versions;

int main(int argc, char** argv) {
  // The reference's cache blocks on this machine, and the caches they come from.
  const workbook::CacheSizes caches = workbook::cache_sizes();
  const lab02::Blocks& blocks = lab02::this_machines_blocks();
  std::cerr << "  v5's blocks, from this machine's caches (L2 " << (caches.l2 >> 10) << " KiB, L3 "
            << (caches.l3 >> 20) << " MiB for " << std::thread::hardware_concurrency()
            << " CPUs): kc = " << blocks.kc << ", mc = " << blocks.mc << ", nc = " << blocks.nc
            << "\n";
#if defined(LAB02_HAVE_OPENBLAS)
  std::cerr << "  OpenBLAS: " << openblas_get_config()
            << " (OPENBLAS_CORETYPE chooses the kernels)\n";
#endif
  // v1 and the seed's blocking take seconds per call: timed at the lab's size only, with a longer
  // cap (2 s) so that they get their rounds.
  workbook::LabBench bench("lab02", 2.0);
  bench.versions(
      lab02::matmul, "v5 packed (the reference)",
      {{"v1 naive i-j-k", v::matmul_v1_naive, true, {"matmul"}},
       {"seed: 6 loops, 32^3 blocks, i-j-k inside", v::matmul_seed_blocked, true, {"matmul"}},
       {"v2 i-k-j", v::matmul_v2_ikj},
       {"v3 cache-blocked i-k-j", v::matmul_v3_blocked},
       {"v4 register-blocked", v::matmul_v4_register_blocked}});
  return bench.main(argc, argv);
}
