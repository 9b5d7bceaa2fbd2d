// Lab 02's sealed worker table: how the checker calls matmul. Arguments: A, B, C, then the shape
// as six numbers (m, n, k, lda, ldb, ldc), as the calls in sealed_test.cpp send them.
#include "matmul.hpp"

#include <grade/sealed_worker.hpp>

WORKBOOK_SEALED_FUNCTION(matmul) {
  auto size = [&](std::size_t i) { return static_cast<std::size_t>(call.integer(i)); };
  const lab02::MatmulShape shape{
      .m = size(3), .n = size(4), .k = size(5), .lda = size(6), .ldb = size(7), .ldc = size(8)};
  lab02::matmul(call.in<float>(0), call.in<float>(1), call.out<float>(2), shape);
}
