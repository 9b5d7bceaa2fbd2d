// Lab 01's sealed worker table: how the checker calls each function of vector_ops.hpp. Argument
// numbers match the calls in sealed_test.cpp.
#include "vector_ops.hpp"

#include <grade/sealed_worker.hpp>

WORKBOOK_SEALED_FUNCTION(relu) {
  lab01::relu(call.in<float>(0), call.out<float>(1));
}
WORKBOOK_SEALED_FUNCTION(add) {
  lab01::add(call.in<float>(0), call.in<float>(1), call.out<float>(2));
}
WORKBOOK_SEALED_FUNCTION(multiply) {
  lab01::multiply(call.in<float>(0), call.in<float>(1), call.out<float>(2));
}
WORKBOOK_SEALED_FUNCTION(squared_difference) {
  lab01::squared_difference(call.in<float>(0), call.in<float>(1), call.out<float>(2));
}
WORKBOOK_SEALED_FUNCTION(dot) {
  call.returns(lab01::dot(call.in<float>(0), call.in<float>(1)));
}
WORKBOOK_SEALED_FUNCTION(euclidean_distance) {
  call.returns(lab01::euclidean_distance(call.in<float>(0), call.in<float>(1)));
}
