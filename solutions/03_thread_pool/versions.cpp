// Lab 03's earlier versions (see versions.hpp). They keep the reference's guarantees: every chunk
// runs once even when some throw, and the lowest-numbered chunk's exception reaches the caller.
#include "versions.hpp"

#include <workbook/require.hpp>

#include <algorithm>
#include <exception>
#include <future>
#include <stdexcept>
#include <thread>

namespace lab03::versions {
namespace {

void require_valid(Range range, std::size_t grain) {
  if (grain == 0) throw std::invalid_argument("parallel_for: grain must be at least 1");
  if (range.end < range.begin)
    throw std::invalid_argument("parallel_for: the range ends before it begins");
}

// The chunks of `range`, in order.
std::vector<Range> chunks_of(Range range, std::size_t grain) {
  std::vector<Range> chunks;
  for (std::size_t b = range.begin; b < range.end; b += std::min(grain, range.end - b))
    chunks.push_back({b, b + std::min(grain, range.end - b)});
  return chunks;
}

}  // namespace

void parallel_for_v1_threads(unsigned threads, Range range, std::size_t grain,
                             const std::function<void(Range)>& body) {
  require_valid(range, grain);
  const std::vector<Range> chunks = chunks_of(range, grain);
  std::vector<std::exception_ptr> errors(chunks.size());
  {
    std::vector<std::jthread> team;
    for (unsigned t = 0; t < std::min<std::size_t>(threads, chunks.size()); ++t) {
      team.emplace_back([&, t] {
        for (std::size_t k = t; k < chunks.size(); k += threads) {
          try {
            body(chunks[k]);
          } catch (...) {
            errors[k] = std::current_exception();
          }
        }
      });
    }
  }  // joins the team
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void parallel_for_v2_task_per_chunk(ThreadPool& pool, Range range, std::size_t grain,
                                    const std::function<void(Range)>& body) {
  require_valid(range, grain);
  const std::vector<Range> chunks = chunks_of(range, grain);
  if (pool.is_worker_thread()) {  // nested: the reference explains why this thread works alone
    std::exception_ptr first;
    for (Range chunk : chunks) {
      try {
        body(chunk);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
    return;
  }
  std::vector<std::future<void>> done;
  done.reserve(chunks.size());
  try {
    for (Range chunk : chunks) done.push_back(pool.submit([&body, chunk] { body(chunk); }));
  } catch (...) {
    for (std::future<void>& f : done) f.wait();  // they use `body`: wait before leaving
    throw;
  }
  for (std::future<void>& f : done) f.wait();  // all of them, before any get() may throw
  for (std::future<void>& f : done) f.get();   // in chunk order: the lowest failing chunk rethrows
}

std::vector<Tensor> process_batch_v2_task_per_tensor(ThreadPool& pool,
                                                     std::span<const Tensor> batch,
                                                     const TensorOp& op) {
  if (!op) throw std::invalid_argument("process_batch: the operation is an empty std::function");
  std::vector<Tensor> results(batch.size());
  parallel_for_v2_task_per_chunk(pool, {0, batch.size()}, 1,
                                 [&](Range r) { results[r.begin] = op(batch[r.begin]); });
  return results;
}

void parallel_relu_v1_threads(unsigned threads, std::span<const float> x, std::span<float> y) {
  workbook::require_elementwise("parallel_relu", x, "x", y, "y");
  // One contiguous share per thread, on 16-float (64-byte) borders.
  const std::size_t share = (x.size() / threads + 15) / 16 * 16;
  parallel_for_v1_threads(threads, {0, x.size()}, std::max<std::size_t>(share, 16), [&](Range r) {
    relu_chunk(x.subspan(r.begin, r.size()), y.subspan(r.begin, r.size()),
               stores_for(y.size_bytes()));
  });
}

void parallel_relu_with(ThreadPool& pool, std::span<const float> x, std::span<float> y,
                        std::size_t grain, Stores stores) {
  workbook::require_elementwise("parallel_relu", x, "x", y, "y");
  parallel_for(pool, {0, x.size()}, grain, [&](Range r) {
    relu_chunk(x.subspan(r.begin, r.size()), y.subspan(r.begin, r.size()), stores);
  });
}

}  // namespace lab03::versions
