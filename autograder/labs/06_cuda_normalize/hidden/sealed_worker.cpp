// Lab 06's sealed worker table: how the checker calls normalize. The checker's buffers are copied
// to the GPU and back (DeviceCopy); argument numbers match sealed_test.cpp.
#include "normalize.hpp"

#include <grade/sealed_device.hpp>
#include <grade/sealed_worker.hpp>

using workbook::sealed::DeviceCopy;

// x, y, rows, cols, eps, then x's and y's misalignment in floats.
WORKBOOK_SEALED_FUNCTION(normalize) {
  DeviceCopy& x = DeviceCopy::of(call, 0, call.integer(5));
  DeviceCopy& y = DeviceCopy::of(call, 1, call.integer(6));
  lab06::normalize(x.data(), y.data(), call.integer(2), call.integer(3),
                   static_cast<float>(call.number(4)));
  DeviceCopy::finish({{&y, "y"}, {&x, "x"}});
}
