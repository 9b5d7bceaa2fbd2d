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
