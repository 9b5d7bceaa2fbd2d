// The record behind cuda/launches.hpp: a wrapper of CUDA's __cudaPushCallConfiguration, which
// every <<<grid, block, shared, stream>>> calls with its configuration just before the launch.
#include <workbook/cuda/launches.hpp>

#include <workbook/cuda/check.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <deque>
#include <mutex>

namespace workbook::cuda {
namespace {

constexpr std::size_t kKept = 64;

struct Record {
  std::mutex mutex;
  std::size_t count = 0;
  std::deque<Launch> last;  // the last kKept launches
};

Record& record() {
  static Record r;
  return r;
}

std::string dims(const std::array<unsigned, 3>& d) {
  std::string s = std::to_string(d[0]);
  if (d[1] != 1 || d[2] != 1) s += " x " + std::to_string(d[1]);
  if (d[2] != 1) s += " x " + std::to_string(d[2]);
  return s;
}

void note_launch(const Launch& launch) {
  Record& r = record();
  const std::lock_guard lock(r.mutex);
  ++r.count;
  r.last.push_back(launch);
  if (r.last.size() > kKept) r.last.pop_front();
}

// Which of this GPU's limits the last launch broke: what an impossible launch's error names.
std::string impossible_launch_reason() {
  const std::optional<Launch> l = last_launch();
  if (!l) return "";
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return "";
  auto limit = [device](cudaDeviceAttr what) {
    int v = 0;
    return cudaDeviceGetAttribute(&v, what, device) == cudaSuccess ? std::size_t(v) : 0;
  };
  const std::string launch = "the launch was " + l->describe() + ": ";
  if (l->blocks() == 0)
    return launch +
           "a grid with no blocks. A count of blocks computed as n / threads is 0 when n < "
           "threads: round up, (n + threads - 1) / threads, and launch nothing at all when n is 0.";
  const std::size_t threads = l->threads_per_block(),
                    max_threads = limit(cudaDevAttrMaxThreadsPerBlock);
  if (max_threads > 0 && threads > max_threads)
    return launch + std::to_string(threads) + " threads per block, over this GPU's limit of " +
           std::to_string(max_threads) +
           ". Make the block smaller (16 x 16 = 256 threads is usual) "
           "and the grid larger.";
  const char* axis[] = {"x", "y", "z"};
  const cudaDeviceAttr block_limit[] = {cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY,
                                        cudaDevAttrMaxBlockDimZ};
  const cudaDeviceAttr grid_limit[] = {cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY,
                                       cudaDevAttrMaxGridDimZ};
  for (int a = 0; a < 3; ++a) {
    if (const std::size_t most = limit(block_limit[a]); most > 0 && l->block[a] > most)
      return launch + "block." + axis[a] + " = " + std::to_string(l->block[a]) +
             ", over this GPU's limit of " + std::to_string(most) + " for block." + axis[a] + ".";
    if (const std::size_t most = limit(grid_limit[a]); most > 0 && l->grid[a] > most)
      return launch + "grid." + axis[a] + " = " + std::to_string(l->grid[a]) +
             ", over this GPU's limit of " + std::to_string(most) + " for grid." + axis[a] +
             (a > 0 ? ". grid.x goes to 2^31 - 1: put the long dimension (the rows) on x, or let "
                      "each block loop over several."
                    : ".");
  }
  const std::size_t plain = limit(cudaDevAttrMaxSharedMemoryPerBlock),
                    opt_in = limit(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  if (opt_in > 0 && l->shared > opt_in)
    return launch + std::to_string(l->shared) +
           " bytes of dynamic shared memory per block, over the most this GPU gives a block (" +
           std::to_string(opt_in) + "). Keep less of the row in shared memory at once.";
  if (plain > 0 && l->shared > plain)
    return launch + std::to_string(l->shared) +
           " bytes of dynamic shared memory per block, over the " + std::to_string(plain) +
           " a block gets without asking (cudaFuncSetAttribute with "
           "cudaFuncAttributeMaxDynamicSharedMemorySize raises it, to at most " +
           std::to_string(opt_in) + " on this GPU).";
  return "";
}

// Installed with the record: every program that launches kernels through <<<...>>> links this file.
[[maybe_unused]] const bool impossible_launches_explained =
    (explain_impossible_launches_with(impossible_launch_reason), true);

}  // namespace

std::string Launch::describe() const {
  std::string s = "a grid of " + dims(grid) + (blocks() == 1 ? " block" : " blocks") + " of " +
                  dims(block) + (threads_per_block() == 1 ? " thread" : " threads");
  if (shared > 0) s += " with " + std::to_string(shared) + " bytes of dynamic shared memory";
  return s;
}

std::size_t launch_count() {
  Record& r = record();
  const std::lock_guard lock(r.mutex);
  return r.count;
}

std::vector<Launch> launches_since(std::size_t mark) {
  Record& r = record();
  const std::lock_guard lock(r.mutex);
  const std::size_t wanted = r.count > mark ? r.count - mark : 0;
  const std::size_t kept = std::min(wanted, r.last.size());
  return {r.last.end() - static_cast<std::ptrdiff_t>(kept), r.last.end()};
}

std::optional<Launch> last_launch() {
  Record& r = record();
  const std::lock_guard lock(r.mutex);
  if (r.last.empty()) return std::nullopt;
  return r.last.back();
}

std::vector<Launch> observe_launches(const std::function<void()>& work) {
  const std::size_t mark = launch_count();
  work();
  WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
  return launches_since(mark);
}

}  // namespace workbook::cuda

// CUDA's runtime entry point behind <<<...>>> (declared by nvcc's generated host code), and the
// wrapper that the link option --wrap=__cudaPushCallConfiguration puts in its place.
extern "C" unsigned __real___cudaPushCallConfiguration(dim3 grid, dim3 block, std::size_t shared,
                                                       struct CUstream_st* stream);

extern "C" unsigned __wrap___cudaPushCallConfiguration(dim3 grid, dim3 block, std::size_t shared,
                                                       struct CUstream_st* stream) {
  try {
    workbook::cuda::note_launch({{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, shared});
  } catch (...) {  // a record that cannot grow must not change the launch
  }
  return __real___cudaPushCallConfiguration(grid, block, shared, stream);
}
