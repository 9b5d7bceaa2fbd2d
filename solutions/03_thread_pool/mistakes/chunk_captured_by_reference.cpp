// Mistake: parallel_for's tasks capture the loop's chunk by reference ([&]): each task runs
// whatever chunk the loop holds when the task starts, so some chunks run twice and others never.
// Which ones changes from run to run; many tiny chunks show it every time.
// Checked by: ParallelFor.ManyTinyChunks
// Expect: Some indices ran twice and others never
// Expect: a race between the tasks
#include "relu_chunk.hpp"
#include "thread_pool.hpp"

#include <algorithm>

namespace lab03 {

void parallel_for(ThreadPool& pool, Range range, std::size_t grain,
                  const std::function<void(Range)>& body) {
  std::vector<std::future<void>> done;
  for (std::size_t b = range.begin; b < range.end; b += grain) {
    Range chunk{b, std::min(b + grain, range.end)};
    if (pool.is_worker_thread())
      body(chunk);
    else
      done.push_back(pool.submit([&] { body(chunk); }));
  }
  for (std::future<void>& f : done) f.wait();
  for (std::future<void>& f : done) f.get();
}

void parallel_relu(ThreadPool& pool, std::span<const float> x, std::span<float> y) {
  const Stores stores = stores_for(y.size_bytes());
  parallel_for(pool, {0, x.size()}, 4096, [&](Range r) {
    relu_chunk(x.subspan(r.begin, r.size()), y.subspan(r.begin, r.size()), stores);
  });
}

}  // namespace lab03
