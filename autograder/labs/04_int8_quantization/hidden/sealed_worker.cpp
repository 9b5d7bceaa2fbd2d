// Lab 04's sealed worker table: how the checker calls each function of quantize.hpp. Argument
// numbers match the calls in sealed_test.cpp; a scale travels as a number (a float is exact in the
// double it is sent as).
#include "quantize.hpp"

#include <grade/sealed_worker.hpp>

#include <cstdint>

namespace {

std::size_t size(const workbook::sealed::Call& call, std::size_t i) {
  return static_cast<std::size_t>(call.integer(i));
}
float scale(const workbook::sealed::Call& call, std::size_t i) {
  return static_cast<float>(call.number(i));
}

// A QuantizedMatrix from four arguments starting at `first`: values, scales, rows, cols.
lab04::QuantizedMatrix matrix(const workbook::sealed::Call& call, std::size_t first) {
  return {call.in<std::int8_t>(first), call.in<float>(first + 1), size(call, first + 2),
          size(call, first + 3)};
}

}  // namespace

WORKBOOK_SEALED_FUNCTION(symmetric_scale) {
  call.returns(lab04::symmetric_scale(call.in<float>(0)));
}
WORKBOOK_SEALED_FUNCTION(quantize) {
  lab04::quantize(call.in<float>(0), scale(call, 1), call.out<std::int8_t>(2));
}
WORKBOOK_SEALED_FUNCTION(dequantize) {
  lab04::dequantize(call.in<std::int8_t>(0), scale(call, 1), call.out<float>(2));
}
WORKBOOK_SEALED_FUNCTION(quantize_rows) {
  lab04::quantize_rows(call.in<float>(0), size(call, 1), call.out<float>(2),
                       call.out<std::int8_t>(3));
}
WORKBOOK_SEALED_FUNCTION(quantized_relu) {
  lab04::quantized_relu(call.in<std::int8_t>(0), call.out<std::int8_t>(1));
}
WORKBOOK_SEALED_FUNCTION(matmul_int8) {
  lab04::matmul_int8(call.in<std::int8_t>(0), call.in<std::int8_t>(1), call.out<std::int32_t>(2),
                     size(call, 3), size(call, 4), size(call, 5));
}
WORKBOOK_SEALED_FUNCTION(quantized_matmul) {
  lab04::quantized_matmul(matrix(call, 0), matrix(call, 4), call.out<float>(8));
}
