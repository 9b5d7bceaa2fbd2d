// C entry points to the reference, for Python (ctypes): solutions/05_cuda_square/torch_peers.py
// times it and F.layer_norm with the same timer, in one process, on the same tensors.
#include "normalize.hpp"

extern "C" int lab06_normalize(const float* x, float* y, std::size_t rows, std::size_t cols,
                               float eps) noexcept {
  try {
    lab06::normalize(x, y, rows, cols, eps);
    return 0;
  } catch (...) {
    return 1;
  }
}
