// v4b: the reference's packing and blocking with the AVX-VNNI micro-kernel (vpdpbusd on 256-bit
// registers). This file is compiled without AVX-512 (see CMakeLists.txt), which is what the build
// selects on machines with AVX-VNNI and no AVX-512 (Intel client cores since Alder Lake): so that
// kernel is tested and timed here too, on a machine with AVX-VNNI (else the AVX2 kernel is).
#include "int8_gemm.hpp"
#include "versions.hpp"

namespace lab04::versions {

void matmul_v4b_packed_avx_vnni(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                                std::span<std::int32_t> c, std::size_t m, std::size_t n,
                                std::size_t depth) {
  using Kernel = gemm::Best;  // AvxVnni256 where the compiler targets AVX-VNNI
  gemm::checked_multiply<Kernel>("matmul_int8", a, b, c.size(), m, n, depth,
                                 gemm::StoreInt32<Kernel::kCols>{c.data(), n});
}

const char* v4b_kernel() {
  return gemm::Best::kName;
}

}  // namespace lab04::versions
