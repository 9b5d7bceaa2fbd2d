// v4: the reference's packing and blocking with the AVX2 micro-kernel. This file is compiled for
// AVX2 without AVX-512 (see CMakeLists.txt), so that the fallback a machine without VNNI would use
// is tested and timed here too.
#include "int8_gemm.hpp"
#include "versions.hpp"

namespace lab04::versions {

void matmul_v4_packed_avx2(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                           std::span<std::int32_t> c, std::size_t m, std::size_t n,
                           std::size_t depth) {
#if defined(__AVX2__)
  using Kernel = gemm::Avx2;
#else
  using Kernel = gemm::Portable;
#endif
  gemm::checked_multiply<Kernel>("matmul_int8", a, b, c.size(), m, n, depth,
                                 gemm::StoreInt32<Kernel::kCols>{c.data(), n});
}

}  // namespace lab04::versions
