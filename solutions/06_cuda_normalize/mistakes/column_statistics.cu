// Mistake: one thread per column, which sums down its column: each column normalized with its
// own statistics (batch normalization), not each row.
// Checked by: Normalize.EpsIsAddedToTheVariance
// Expect: your output matches the statistics of each column, not of each row
#include "normalize.hpp"

#include <workbook/cuda/check.hpp>

namespace lab06 {
namespace {

__global__ void normalize_columns(const float* x, float* y, std::size_t rows, std::size_t cols,
                                  float eps) {
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= cols) return;
  float sum = 0;
  for (std::size_t r = 0; r < rows; ++r) sum += x[r * cols + c];
  const float mean = sum / float(rows);
  float squares = 0;
  for (std::size_t r = 0; r < rows; ++r)
    squares += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
  const float inv_std = rsqrtf(squares / float(rows) + eps);
  for (std::size_t r = 0; r < rows; ++r) y[r * cols + c] = (x[r * cols + c] - mean) * inv_std;
}

}  // namespace

void normalize(const float* x, float* y, std::size_t rows, std::size_t cols, float eps) {
  check_normalize_arguments(x, y, rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  normalize_columns<<<static_cast<unsigned>((cols + 255) / 256), 256>>>(x, y, rows, cols, eps);
  WORKBOOK_CUDA_CHECK_LAUNCH(normalize_columns);
}

}  // namespace lab06
