#pragma once
/// \file cuda/launches.hpp
/// \brief The kernel launches this process made, as the harness observed them: grid and block
/// dimensions and dynamic shared memory of every `kernel<<<grid, block, shared>>>(...)`.
///
/// Diagnoses and perf hints describe the launch the student's code actually made, never one
/// guessed from the usual shapes. Every `<<<...>>>` in a program linked with workbook::cuda goes
/// through `__cudaPushCallConfiguration` (CUDA's runtime), which the link wraps
/// (`--wrap=__cudaPushCallConfiguration`, set on workbook::cuda): the wrapper notes the
/// configuration and hands it on unchanged.
///
/// \code
/// const std::size_t mark = workbook::cuda::launch_count();
/// lab05::square(x, y, n);
/// for (const workbook::cuda::Launch& l : workbook::cuda::launches_since(mark)) ... l.describe()
/// \endcode

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace workbook::cuda {

/// One launch configuration, as given to <<<grid, block, shared>>>.
struct Launch {
  std::array<unsigned, 3> grid{1, 1, 1};   ///< blocks in x, y, z
  std::array<unsigned, 3> block{1, 1, 1};  ///< threads per block in x, y, z
  std::size_t shared = 0;                  ///< bytes of dynamic shared memory

  /// Threads per block.
  std::size_t threads_per_block() const { return std::size_t{block[0]} * block[1] * block[2]; }
  /// Blocks in the grid.
  std::size_t blocks() const { return std::size_t{grid[0]} * grid[1] * grid[2]; }
  /// True when only x is used, in the grid and in the block.
  bool one_dimensional() const {
    return grid[1] == 1 && grid[2] == 1 && block[1] == 1 && block[2] == 1;
  }
  /// "a grid of 1024 blocks of 256 threads" or "a grid of 63 x 40 blocks of 16 x 16 threads".
  std::string describe() const;
};

/// How many launches this process has made so far (a mark for launches_since).
std::size_t launch_count();
/// The launches made after `mark` (launch_count() then), oldest first; at most the last 64.
std::vector<Launch> launches_since(std::size_t mark);
/// The last launch this process made, if any.
std::optional<Launch> last_launch();
/// Runs `work` (which launches kernels), waits for the GPU, and returns the launches it made.
std::vector<Launch> observe_launches(const std::function<void()>& work);

}  // namespace workbook::cuda
