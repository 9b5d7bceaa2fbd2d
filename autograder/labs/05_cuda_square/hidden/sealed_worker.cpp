// Lab 05's sealed worker table: how the checker calls each function of square.hpp. The checker's
// buffers are copied to the GPU and back (DeviceCopy); argument numbers match sealed_test.cpp.
#include "square.hpp"
#include "timing_checks.hpp"

#include <grade/sealed_device.hpp>
#include <grade/sealed_worker.hpp>

#include <algorithm>

using workbook::sealed::DeviceCopy;

// x, y, then x's and y's misalignment in floats.
WORKBOOK_SEALED_FUNCTION(square) {
  DeviceCopy& x = DeviceCopy::of(call, 0, call.integer(2));
  DeviceCopy& y = DeviceCopy::of(call, 1, call.integer(3));
  lab05::square(x.data(), y.data(), x.size());
  DeviceCopy::finish({{&y, "y"}, {&x, "x"}});
}

// x, y, ld_x, ld_y, rows, cols, then x's and y's misalignment.
WORKBOOK_SEALED_FUNCTION(square_2d) {
  DeviceCopy& x = DeviceCopy::of(call, 0, call.integer(6));
  DeviceCopy& y = DeviceCopy::of(call, 1, call.integer(7));
  lab05::square_2d(x.data(), call.integer(2), y.data(), call.integer(3), call.integer(4),
                   call.integer(5));
  DeviceCopy::finish({{&y, "y"}, {&x, "x"}});
}

// The milliseconds of each timed run (out), warmup, runs, then the lengths of the work in ms (its
// launches cycle through them after a cold first launch). Returns how many durations time_launches
// returned and how many times it launched the work.
WORKBOOK_SEALED_FUNCTION(time_launches) {
  std::vector<double> lengths;
  for (std::size_t i = 3; i < 5; ++i) lengths.push_back(call.number(i));
  lab05::timing_checks::KnownWork work(lengths);
  const std::vector<float> ms = lab05::time_launches(
      [&] { work(); }, static_cast<int>(call.integer(1)), static_cast<int>(call.integer(2)));
  const std::span<float> out = call.out<float>(0);
  std::copy_n(ms.begin(), std::min(ms.size(), out.size()), out.begin());
  call.returns(static_cast<double>(ms.size()));
  call.returns(work.launches());
}
