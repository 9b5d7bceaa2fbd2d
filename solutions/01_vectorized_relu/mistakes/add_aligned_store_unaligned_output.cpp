// Mistake: an aligned store (store_aligned) on an output that may start anywhere: the processor
// refuses it, and the test process dies of SIGSEGV. The crash report names the case, the output's
// alignment and the usual cause.
// Checked by: Add.UnalignedAndInPlace
// Expect: *** CRASH: SIGSEGV (segmentation fault) in test Add.UnalignedAndInPlace
// Expect: While running add, case: offsets from a 64-byte boundary, in floats: a 1, b 15, out 1
// Expect: crashed at solutions/01_vectorized_relu/mistakes/add_aligned_store_unaligned_output.cpp
// Expect: an aligned load or store
// Expect: the output (999 floats) starts 4 bytes past a
// Expect: Next: edit labs/01_vectorized_relu/vector_ops.cpp: add.
#include "vector_ops.hpp"

#include <xsimd/xsimd.hpp>

namespace lab01 {

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  using Batch = xsimd::batch<float>;
  std::size_t i = 0;
  for (; i + Batch::size <= a.size(); i += Batch::size)
    (Batch::load_unaligned(&a[i]) + Batch::load_unaligned(&b[i])).store_aligned(&out[i]);
  for (; i < a.size(); ++i) out[i] = a[i] + b[i];
}

}  // namespace lab01
