// Mistake: matmul_int16_sum.cpp (the sums kept in int16), as the test of the whole pipeline's
// typical error sees it: through quantized_matmul, which calls matmul_int8.
// Checked by: QuantizedMatmul.TypicalErrorFollowsTheModel
// Expect: the cause is: quantized_matmul
// Expect: your output matches the scales times the sum kept in int16, wrapping around past 32767
#include "matmul_int16_sum.cpp"
#include "quantized_matmul_calls_matmul_int8.hpp"
