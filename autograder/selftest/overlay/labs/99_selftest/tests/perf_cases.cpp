// Lab 99's perf case: a short one (the self-test times it against the reference).
#include "scale.hpp"
#include "scale_oracle.hpp"

#include <workbook/buffer.hpp>
#include <workbook/perf.hpp>

namespace {

constexpr std::size_t kN = 4096;  // 16 KiB in, 16 KiB out: in L1
constexpr int kCalls = 64;

void scale(workbook::perf::Case& perf) {
  workbook::AlignedVector<float> x(kN);
  workbook::fill_uniform(x, perf.rng());
  workbook::GuardedBuffer<float> y(kN);
  perf.describe("scale", "a * x of 4096 floats, in L1, 64 calls per timed run");
  perf.work(
      {.ops = double(kN) * kCalls, .bytes = 8.0 * kN * kCalls, .traffic = workbook::Traffic::l1});
  perf.measure({.run =
                    [&] {
                      for (int i = 0; i < kCalls; ++i) lab99::scale(x, 1.5f, y.span());
                    },
                .poison = [&] { y.poison(); },
                .verify = [&] { return lab99::oracle::check_scale(x, 1.5f, y); },
                .output = workbook::perf::output_of(y, workbook::Tolerance::roundings(1))});
}
WORKBOOK_PERF_CASE(scale);

}  // namespace
