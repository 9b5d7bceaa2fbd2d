#pragma once
// GPU builds only: the statistics inference (normalize_inference.hpp) reads a wrong output against
// the block size of the launch that wrote it, as the harness observed it
// (workbook/cuda/launches.hpp: blockDim.x of the last launch). Included by the GPU tests and the
// perf cases.
#include "normalize_inference.hpp"

#include <workbook/cuda/launches.hpp>

#include <cstddef>
#include <optional>

namespace lab06::inference {

inline const bool kLaunchObserved = [] {
  observed_block_threads() = [] {
    const std::optional<workbook::cuda::Launch> last = workbook::cuda::last_launch();
    return last ? std::size_t{last->block[0]} : std::size_t{0};
  };
  return true;
}();

}  // namespace lab06::inference
