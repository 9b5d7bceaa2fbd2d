// Mistake: B copied into a std::vector and read with .at(), the loop over p running to k inclusive:
// .at() throws std::out_of_range on the row past the end.
// Checked by: Matmul.TinyShapes
// Expect: indexed past the end of an array that checks its index
// Expect: in matmul (inside std::vector::at, which this line calls):
#include "matmul.hpp"

#include <vector>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  require_valid_arguments(a, b, c, shape);
  std::vector<float> packed(shape.k * shape.n);
  for (std::size_t p = 0; p < shape.k; ++p)
    for (std::size_t j = 0; j < shape.n; ++j) packed.at(p * shape.n + j) = b[p * shape.ldb + j];
  for (std::size_t i = 0; i < shape.m; ++i)
    for (std::size_t j = 0; j < shape.n; ++j) {
      float sum = 0;
      for (std::size_t p = 0; p <= shape.k; ++p)  // the mistake: p < shape.k
        sum += packed.at(p * shape.n + j) * a[i * shape.lda + p];
      c[i * shape.ldc + j] = sum;
    }
}

}  // namespace lab02
